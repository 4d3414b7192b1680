package engine

// Deliverer sends notices. Deliver must not block: it queues the notice and
// returns; the outcome of each attempt comes back through
// Engine.DeliveryDone, with the notice's Workspace, Delivery and Attempt,
// from another goroutine (never from within Deliver, which may run on the
// log's committer: DeliveryDone waits for the actor, which may be waiting
// for the committer).
type Deliverer interface {
	Deliver(n Notice)
}
