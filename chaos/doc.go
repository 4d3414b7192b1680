// Package chaos holds the cluster's chaos test (chaos_test.go): a local
// cluster of three NATS servers and three backupmon nodes under a load of
// reports, through rounds that kill, freeze and cut off its processes, and
// the check, after each round, that every acknowledged report is there
// exactly once. `make test` runs three rounds, `make chaos` twenty, writing
// the failover times to bench/RESULTS.md.
package chaos
