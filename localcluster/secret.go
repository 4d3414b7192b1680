package localcluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// writeSecret writes a new random NATS secret (64 hexadecimal characters,
// from crypto/rand) to path, readable by its owner only (0600), and
// returns it, or an error naming the file.
func writeSecret(path string) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("localcluster: the NATS secret: %w", err)
	}
	secret := hex.EncodeToString(raw[:])
	// Removed first: WriteFile keeps the mode of a file that exists.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("localcluster: the NATS secret: %w", err)
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("localcluster: the NATS secret: %w", err)
	}
	return secret, nil
}
