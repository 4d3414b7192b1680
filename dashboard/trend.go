package dashboard

import (
	"fmt"
	"html/template"
	"strconv"
	"time"

	"backupmon/engine"
)

// The job page's trend charts: a run's duration and size over the last 30
// or 90 days, drawn as inline SVG on the server (no script, no library);
// the stylesheet colours them, so the Content-Security-Policy holds.

// Chart geometry, in the SVG's own units (it scales to the page's width).
const (
	chartW, chartH        = 720, 180
	chartLeft, chartRight = 70, 10
	chartTop, chartBottom = 12, 26
	plotW                 = chartW - chartLeft - chartRight
	plotH                 = chartH - chartTop - chartBottom
	chartDots             = 120 // runs up to which each is a dot too
)

// durationAxis says a duration in seconds on an axis.
func durationAxis(sec int64) string {
	switch {
	case sec < 120:
		return fmt.Sprintf("%d s", sec)
	case sec < 2*3600:
		return fmt.Sprintf("%d min", sec/60)
	}
	return fmt.Sprintf("%.1f h", float64(sec)/3600)
}

func sizeAxis(n int64) string { return engine.SizeText(n) }

// chartX and chartY place a point of t with top value top.
func chartX(t engine.Trend, at int64) float64 {
	return chartLeft + float64(at-t.From)/float64(max(t.To-t.From, 1))*plotW
}

func chartY(v, top int64) float64 {
	return chartTop + plotH - float64(v)/float64(max(top, 1))*plotH
}

// trendChart draws pts (name: "duration" or "size") of t; markAt is the
// completion time of the flagged run, marked on the chart (0: none).
func trendChart(v *view, t engine.Trend, pts []engine.TrendPoint, axis func(int64) string, name string, markAt int64) template.HTML {
	var top int64
	for _, p := range pts {
		top = max(top, p.V)
	}
	days := (t.To - t.From) / 86_400_000
	w := htmlOut{b: make([]byte, 0, 512+96*len(pts))}
	w.raw(`<svg class="trend" id="trend-` + name + `" viewBox="0 0 ` + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH) + `" role="img" aria-label="`)
	label := fmt.Sprintf("%s of %d run(s) over the last %d days", upperFirst(name), len(pts), days)
	if len(pts) > 0 {
		label += ", up to " + axis(top)
	}
	w.text(label)
	w.raw(`" data-points="` + strconv.Itoa(len(pts)) + `">`)
	// Axes: the bottom line at zero and the top value, the period's ends.
	w.raw(fmt.Sprintf(`<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, chartLeft, chartTop+plotH, chartLeft+plotW, chartTop+plotH))
	w.raw(fmt.Sprintf(`<line class="grid" x1="%d" y1="%d" x2="%d" y2="%d"/>`, chartLeft, chartTop, chartLeft+plotW, chartTop))
	w.raw(fmt.Sprintf(`<text class="label" x="%d" y="%d" text-anchor="end">`, chartLeft-6, chartTop+4))
	w.text(axis(top))
	w.raw(fmt.Sprintf(`</text><text class="label" x="%d" y="%d" text-anchor="end">0</text>`, chartLeft-6, chartTop+plotH+4))
	w.raw(fmt.Sprintf(`<text class="label" x="%d" y="%d">`, chartLeft, chartH-6))
	w.text(v.Date(t.From))
	w.raw(fmt.Sprintf(`</text><text class="label" x="%d" y="%d" text-anchor="end">`, chartLeft+plotW, chartH-6))
	w.text(v.Date(t.To))
	w.raw(`</text>`)
	if len(pts) == 0 {
		w.raw(fmt.Sprintf(`<text class="empty" x="%d" y="%d" text-anchor="middle">No runs with a %s in this period.</text></svg>`, chartLeft+plotW/2, chartTop+plotH/2, name))
		return template.HTML(w.b)
	}
	w.raw(`<polyline class="line" points="`)
	for i, p := range pts {
		if i > 0 {
			w.raw(" ")
		}
		w.raw(fmt.Sprintf("%.1f,%.1f", chartX(t, p.At), chartY(p.V, top)))
	}
	w.raw(`"/>`)
	for _, p := range pts {
		drop := p.At == markAt && markAt != 0
		if len(pts) > chartDots && !drop {
			continue
		}
		class, r := "pt", "3"
		if drop {
			class, r = "pt drop", "6"
		}
		w.raw(fmt.Sprintf(`<circle class="%s" cx="%.1f" cy="%.1f" r="%s" data-at="%s" data-v="%d"><title>`, class, chartX(t, p.At), chartY(p.V, top), r,
			time.UnixMilli(p.At).UTC().Format(time.RFC3339), p.V))
		w.text(v.T(p.At).Local + ": " + axis(p.V))
		if drop {
			w.text(" (" + t.Drop.Text() + ")")
		}
		w.raw(`</title></circle>`)
	}
	w.raw(`</svg>`)
	return template.HTML(w.b)
}
