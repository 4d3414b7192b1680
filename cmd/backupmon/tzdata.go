package main

// The IANA time zone database, embedded (about 450 KB), so that workspace
// time zones load on hosts without zoneinfo files, such as minimal
// containers; time.LoadLocation uses it when the system has none.
import _ "time/tzdata"
