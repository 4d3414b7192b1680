// Package clustertest holds the black-box tests of a cluster run as
// processes (three NATS servers, three backupmon nodes, on loopback): that
// any node answers every surface alike (surface_test.go), and the chaos
// test (chaos_test.go), whose rounds kill, freeze and cut off processes
// under a load of reports and check that every acknowledged report is
// there exactly once. `make test` runs three chaos rounds, `make chaos`
// twenty, writing the failover times to bench/RESULTS.md.
package clustertest
