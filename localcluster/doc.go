// Package localcluster runs a whole backupmon cluster on one machine:
// three NATS servers (`backupmon nats`) and a few backupmon nodes (`serve
// --cluster`), each a child process of the backupmon binary, on loopback.
// Each node reaches every NATS server through a TCP proxy of its own, so
// that a node can be cut off from the cluster (its connections closed, or
// blackholed: kept open with no byte passing), slowed, and joined again;
// with Config.RouteProxies each server's route to each other goes
// through a proxy too, so that a test can part the NATS servers. `make
// cluster`, the chaos test and `bench cluster` run clusters with it.
package localcluster
