package state

import "time"

func DaysList(days uint8) []string {
	list := make([]string, 0, 7)
	// Monday first, as people read a week.
	for _, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		if days&(1<<uint(d)) != 0 {
			list = append(list, WeekdayNames[d])
		}
	}
	return list
}

func ScopeList(bits uint8) []string {
	list := make([]string, 0, len(ScopeNames))
	for _, s := range ScopeNames {
		if bits&s.Bit != 0 {
			list = append(list, s.Name)
		}
	}
	return list
}
