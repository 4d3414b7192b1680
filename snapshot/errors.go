package snapshot

import "errors"

// ErrNoSnapshot is returned by Load when the directory holds no snapshot
// file at all.
var ErrNoSnapshot = errors.New("no snapshot")

// ErrCorrupt is wrapped by every error that reports a damaged, incomplete or
// foreign snapshot file.
var ErrCorrupt = errors.New("snapshot corrupt")
