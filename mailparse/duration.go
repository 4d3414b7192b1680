package mailparse

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

var (
	clockDurRe = regexp.MustCompile(`(?:^|[^\d:.])(?:(\d+)[.d ]\s*)?(\d{1,4}):(\d{2}):(\d{2})(?:[.,]\d+)?(?:$|[^\d:])`)
	wordDurRe  = regexp.MustCompile(`(?i)(\d+(?:[.,]\d+)?)\s*(days?|tage?n?|jours?|dagen|dag|d|hours?|hrs?|h|stunden?|std|heures?|uur|minutes?|minuten?|mins?|m|seconds?|sekunden?|secondes?|seconden|secs?|sek|s)\b`)
)

// durUnits maps the unit words wordDurRe reads to seconds.
var durUnits = map[string]float64{
	"d": 86400, "day": 86400, "days": 86400, "tag": 86400, "tage": 86400, "tagen": 86400,
	"jour": 86400, "jours": 86400, "dag": 86400, "dagen": 86400,
	"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600, "std": 3600,
	"stunde": 3600, "stunden": 3600, "heure": 3600, "heures": 3600, "uur": 3600,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60, "minuten": 60,
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "sek": 1, "sekunde": 1,
	"sekunden": 1, "seconde": 1, "secondes": 1, "seconden": 1,
}

// ParseDuration reads a duration in whole seconds from the ways products
// print one: "0:18:35", "01:14:35", "1.02:03:04" (days), "24 min 47 sec",
// "1 hour, 14 minutes, and 35 seconds", "42s", "1h 2m 3s". It returns false
// when s holds none.
func ParseDuration(s string) (int64, bool) {
	if m := clockDurRe.FindStringSubmatch(s); m != nil {
		d, _ := strconv.ParseInt(m[1]+"0", 10, 64)
		h, _ := strconv.ParseInt(m[2], 10, 64)
		mi, _ := strconv.ParseInt(m[3], 10, 64)
		sec, _ := strconv.ParseInt(m[4], 10, 64)
		if mi < 60 && sec < 60 {
			return d/10*86400 + h*3600 + mi*60 + sec, true
		}
	}
	var total float64
	found := false
	for _, m := range wordDurRe.FindAllStringSubmatch(s, 8) {
		v, err := strconv.ParseFloat(strings.Replace(m[1], ",", ".", 1), 64)
		if err != nil {
			continue
		}
		total += v * durUnits[strings.ToLower(m[2])]
		found = true
	}
	if !found || total > math.MaxInt32 {
		return 0, false
	}
	return int64(math.Round(total)), true
}
