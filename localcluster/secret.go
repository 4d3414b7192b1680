package localcluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"backupmon/vfs"
)

// writeSecret writes a new random NATS secret (64 hexadecimal characters,
// from crypto/rand) to path, readable by its owner only (0600: the file is
// replaced, not rewritten, so an older file's mode does not stay), and
// returns it, or an error naming the file.
func writeSecret(path string) (string, error) {
	var raw [32]byte
	rand.Read(raw[:]) // never fails (crypto/rand since Go 1.24)
	secret := hex.EncodeToString(raw[:])
	if err := vfs.WriteFile(vfs.OS, path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("localcluster: the NATS secret: %w", err)
	}
	return secret, nil
}
