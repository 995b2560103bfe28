package documents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Reading a kept document back ("robotsgate audit -document").

// ErrNotFound is returned by Read when no kept document's hash starts
// with the prefix.
var ErrNotFound = errors.New("no policy document kept with that hash")

// Read returns the hash and body of the document kept under dir whose
// hash starts with prefix (at least 4 hex digits, any case); an error
// when none or several do, or when the file no longer matches its hash
// (it was changed after it was written).
func Read(dir, prefix string) (string, []byte, error) {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if _, err := hex.DecodeString(prefix[:len(prefix)&^1]); err != nil || len(prefix) < 4 || len(prefix) > 2*sha256.Size {
		return "", nil, fmt.Errorf("%q is not a SHA-256 or a prefix of one (4 to 64 hex digits)", prefix)
	}
	names, err := os.ReadDir(filepath.Join(dir, prefix[:2]))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("reading the documents directory: %w", err)
	}
	var found []string
	for _, n := range names {
		if validSum(n.Name()) && strings.HasPrefix(n.Name(), prefix) {
			found = append(found, n.Name())
		}
	}
	switch {
	case len(found) == 0:
		return "", nil, fmt.Errorf("%w: %s (in %s)", ErrNotFound, prefix, dir)
	case len(found) > 1:
		return "", nil, fmt.Errorf("%d policy documents have hashes starting with %s: give more digits", len(found), prefix)
	}
	sum := found[0]
	body, err := os.ReadFile(Path(dir, sum))
	if err != nil {
		return "", nil, fmt.Errorf("reading policy document: %w", err)
	}
	if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sum {
		return sum, nil, fmt.Errorf("policy document %s was changed after it was kept: its content no longer matches its hash", sum)
	}
	return sum, body, nil
}
