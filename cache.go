package flagsnap

// The cache file of WithCacheFile: the last accepted flag set, written
// atomically and read back when Init cannot reach the source.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/docread"
	"github.com/flagsnap/flagsnap/source"
)

// cacheEntry is the content of the cache file: the last accepted flag
// document, as it came, and its sync context.
type cacheEntry struct {
	Flags       string         `json:"flags"`
	SyncContext map[string]any `json:"syncContext,omitempty"`
	Origin      string         `json:"origin,omitempty"`
}

// writeCache stores an accepted flag set. The file is replaced atomically
// (a temporary file in the same directory, synced, then renamed), so a
// crash never leaves half a cache behind.
func writeCache(path string, u source.Update) error {
	b, err := json.Marshal(cacheEntry{Flags: string(u.Flags), SyncContext: u.SyncContext, Origin: u.Origin})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readCache loads the cached flag set, and returns it with the document
// it was compiled from.
func (p *Provider) readCache() (*evaluator.FlagSet, []byte, error) {
	b, err := readCacheFile(p.cfg.CacheFile, maxCacheSize(p.cfg.MaxMessageSize))
	if err != nil {
		return nil, nil, err
	}
	var entry cacheEntry
	if err := json.Unmarshal(b, &entry); err != nil {
		return nil, nil, fmt.Errorf("cache file %s is corrupt: %w", p.cfg.CacheFile, err)
	}
	if entry.Flags == "" {
		return nil, nil, errors.New("cache file " + p.cfg.CacheFile + " holds no flags")
	}
	doc := []byte(entry.Flags)
	set, err := p.compile(doc, entry.SyncContext, p.flags())
	if err != nil {
		return nil, nil, fmt.Errorf("cache file %s: %w", p.cfg.CacheFile, err)
	}
	return set, doc, nil
}

// maxCacheSize bounds the cache file of a provider that takes flag sets
// of up to maxMessage bytes: writeCache holds the document as a JSON
// string, which spells a byte in six at the most (\u00XX), with its sync
// context, which came in the same message, and the origin beside it.
func maxCacheSize(maxMessage int) int64 {
	if int64(maxMessage) > (math.MaxInt64-1<<20)/6 {
		return math.MaxInt64 // the product would wrap around
	}
	return 6*int64(maxMessage) + 1<<20
}

// readCacheFile reads the cache file at path as the flag file is read: a
// regular file (opening a FIFO would hold Init up for good) of at most
// limit bytes, having read no more than that.
func readCacheFile(path string, limit int64) ([]byte, error) {
	b, err := docread.RegularFile(path, limit)
	var tooLarge *docread.TooLargeError
	switch {
	case errors.As(err, &tooLarge) && tooLarge.Size < 0:
		return nil, fmt.Errorf("cache file %s grew past %d bytes while it was read", path, limit)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("cache file %s is %d bytes, more than a cache of this provider's flags can be (%d)", path, tooLarge.Size, limit)
	case errors.Is(err, docread.ErrNotRegular), errors.Is(err, syscall.EISDIR):
		return nil, fmt.Errorf("cache file %s is not a regular file", path)
	}
	return b, err
}
