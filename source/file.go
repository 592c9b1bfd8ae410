package source

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/flagsnap/flagsnap/internal/docread"
	"github.com/flagsnap/flagsnap/internal/flagddefault"
)

const (
	defaultDebounce = 50 * time.Millisecond

	// minSettle keeps the second read of a settle check meaningful when
	// Debounce is tiny: a writer needs a moment to issue its next write.
	minSettle = 5 * time.Millisecond

	// maxSettleReads bounds how long one check chases a file that keeps
	// changing; the next event or poll tick tries again.
	maxSettleReads = 5

	// maxLinkHops matches the limit Linux puts on symlink resolution, so a
	// loop ends the same way the kernel would end it.
	maxLinkHops = 40
)

// kindError is a sentinel that also matches its io/fs counterpart, so
// callers that only know the standard errors still recognise it.
type kindError struct {
	text string
	fs   error
}

func (e *kindError) Error() string { return e.text }

func (e *kindError) Is(target error) bool { return e.fs != nil && target == e.fs }

// Errors a [File] reports through [Sink.Lost]. Test for them with
// [errors.Is]; ErrNotExist also matches [fs.ErrNotExist] and ErrPermission
// matches [fs.ErrPermission]. When the operating system produced the
// failure, its [*fs.PathError] is in the chain too.
var (
	ErrNotExist    error = &kindError{"no such file", fs.ErrNotExist}
	ErrIsDirectory error = &kindError{"is a directory, not a file", nil}
	ErrPermission  error = &kindError{"permission denied", fs.ErrPermission}
)

// errNotRegular rejects FIFOs and devices, either of which would stop Run
// from honouring its context (see docread.ErrNotRegular).
var errNotRegular = docread.ErrNotRegular

// errUnsettled means the content kept changing during a check; it is not a
// loss, only a reason to wait for the next event or poll.
var errUnsettled = errors.New("content still changing")

// fileError gives every failure the same shape: the flag file's path, a
// kind to test with errors.Is, and the operating system's own error.
type fileError struct {
	path  string
	kind  error
	cause error
}

func (e *fileError) Error() string {
	if e.kind != nil {
		return "flag file " + e.path + ": " + e.kind.Error()
	}
	// The path is already in the message; repeating it from the
	// PathError only adds noise.
	msg := e.cause.Error()
	var pe *fs.PathError
	if errors.As(e.cause, &pe) {
		msg = pe.Err.Error()
	}
	return "flag file " + e.path + ": " + msg
}

func (e *fileError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.cause}
	}
	return []error{e.kind, e.cause}
}

func newFileError(path string, err error) error {
	var kind error
	switch {
	case errors.Is(err, syscall.EISDIR):
		kind = ErrIsDirectory
	// ENOTDIR means a component of the path is a file: for whoever
	// deploys the flag file, that is just as missing.
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		kind = ErrNotExist
	case errors.Is(err, fs.ErrPermission):
		kind = ErrPermission
	}
	return &fileError{path: path, kind: kind, cause: err}
}

// FileConfig configures a File source.
type FileConfig struct {
	// Path is the flag file. Required.
	Path string
	// PollInterval is how often the file is re-read whatever the watcher
	// says; 0 means the default, 5s.
	PollInterval time.Duration
	// Debounce is the quiet time after a burst of change events before
	// reading; 0 means the default, 50ms.
	Debounce time.Duration
	// MaxSize bounds the flag file, in bytes; 0 means the default,
	// 1 GiB, as the other sources' bounds. A larger file is not read: it
	// is reported through [Sink.Lost] as a [*MessageTooLargeError], and
	// the flags in force stay.
	MaxSize int64
	// Optional says that the file may well not exist, as an override
	// file often does not: its absence is still reported through
	// [Sink.Lost], but logged at Debug rather than as a loss to warn of.
	Optional bool
	// Logger receives diagnostics; nil means silent.
	Logger *slog.Logger
}

// File is a [Source] that reads a flag file and delivers it again whenever
// its content changes.
//
// It watches the file's directory rather than the file, because saving
// through a rename and swapping a Kubernetes ConfigMap replace the file
// instead of writing to it, and a watch on the old file would go quiet. It
// re-reads the file every PollInterval as well, because some file systems
// (network mounts, bind mounts into containers) never report changes. A
// read that differs from the one before is only delivered once a second
// read a moment later agrees, so a file caught half-written is not.
//
// When the file is a symlink, the links it resolves through inside its
// directory are watched too, which is how a ConfigMap update is seen at
// once. A change behind a link that leaves the directory is seen at the
// next poll.
type File struct {
	path     string
	poll     time.Duration
	debounce time.Duration
	settle   time.Duration
	log      *slog.Logger
	optional bool
	seed     maphash.Seed // for recognising content already delivered

	started atomic.Bool

	// Replaced by tests to produce failures the file system cannot
	// produce for root, and to take the watcher away.
	readFile   func(string) ([]byte, error)
	newWatcher func() (*fsnotify.Watcher, error)
}

// NewFile checks cfg and returns a File source. It does not touch the file
// system: a file that is missing now may appear once Run is watching.
func NewFile(cfg FileConfig) (*File, error) {
	if cfg.Path == "" {
		return nil, errors.New("source: FileConfig.Path is required")
	}
	if cfg.PollInterval < 0 {
		return nil, fmt.Errorf("source: FileConfig.PollInterval must not be negative, got %v", cfg.PollInterval)
	}
	if cfg.Debounce < 0 {
		return nil, fmt.Errorf("source: FileConfig.Debounce must not be negative, got %v", cfg.Debounce)
	}
	if cfg.MaxSize < 0 {
		return nil, fmt.Errorf("source: FileConfig.MaxSize must not be negative, got %d", cfg.MaxSize)
	}
	cfg = cfg.withDefaults()
	maxSize := cfg.MaxSize
	return &File{
		path:       cfg.Path,
		poll:       cfg.PollInterval,
		debounce:   cfg.Debounce,
		settle:     max(cfg.Debounce/2, minSettle),
		log:        cfg.Logger,
		optional:   cfg.Optional,
		seed:       maphash.MakeSeed(),
		readFile:   func(path string) ([]byte, error) { return readRegular(path, cfg.Path, maxSize) },
		newWatcher: fsnotify.NewWatcher,
	}, nil
}

// withDefaults returns cfg with the settings left zero set to their
// defaults: the one place where the source's defaults apply.
func (cfg FileConfig) withDefaults() FileConfig {
	cfg.PollInterval = cmp.Or(cfg.PollInterval, flagddefault.FilePollInterval)
	cfg.Debounce = cmp.Or(cfg.Debounce, defaultDebounce)
	cfg.MaxSize = cmp.Or(cfg.MaxSize, flagddefault.MaxMessageSize)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Path returns the flag file's path as configured.
func (f *File) Path() string { return f.path }

// Run implements [Source]. It reads the file at once, then delivers every
// change until ctx is done. A file that is missing, unreadable or a
// directory is reported through [Sink.Lost] once, not on every retry, and
// the next successful read is delivered through [Sink.Update] even if its
// content is what was delivered before the loss.
//
// Everything, sink calls included, happens on the goroutine that called
// Run, which is what keeps the sink's calls ordered and never concurrent.
func (f *File) Run(ctx context.Context, sink Sink) error {
	if !f.started.CompareAndSwap(false, true) {
		return errors.New("source: File.Run called more than once")
	}
	if ctx.Err() != nil {
		return nil
	}
	abs, err := filepath.Abs(f.path)
	if err != nil {
		// Only a missing working directory gets here; a relative watch
		// still works for as long as nobody changes directory.
		abs = filepath.Clean(f.path)
	}
	r := &runner{
		f:     f,
		sink:  sink,
		abs:   abs,
		dir:   filepath.Dir(abs),
		base:  filepath.Base(abs),
		names: map[string]bool{filepath.Base(abs): true},
	}
	defer r.close()
	return r.run(ctx)
}

// runner is the state of one Run.
type runner struct {
	f    *File
	sink Sink

	abs, dir, base string

	// names are the entries of dir the flag file resolves through: its
	// own name, and for a symlink the links and directories its target
	// passes through inside dir.
	names map[string]bool

	watcher     *fsnotify.Watcher
	events      <-chan fsnotify.Event // nil until there is a watcher
	errs        <-chan error
	watching    bool
	watchFailed bool // a failure was logged and not yet followed by success

	// delivered is set once content went to the sink; lastLen and
	// lastSum identify the content last delivered. Only a hash is kept:
	// a copy of a large file would double what the provider holds.
	delivered bool
	lastLen   int
	lastSum   uint64
	// lostMsg is the message of the Lost reported for the current loss,
	// and empty while the file is not lost: a fileError's message never is.
	// lostQuietly says it was logged at Debug (see FileConfig.Optional).
	lostMsg     string
	lostQuietly bool
}

func (r *runner) run(ctx context.Context) error {
	r.check(ctx)

	debounce := time.NewTimer(r.f.debounce)
	debounce.Stop()
	defer debounce.Stop()
	poll := time.NewTicker(r.f.poll)
	defer poll.Stop()

	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-r.events:
			if !ok {
				r.dropWatcher()
				continue
			}
			if r.relevant(ev) {
				debounce.Reset(r.f.debounce)
			}
		case err, ok := <-r.errs:
			if !ok {
				r.dropWatcher()
				continue
			}
			// Either way some events may be gone, so look at the file
			// rather than trust that nothing happened.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.f.log.Debug("flag file watcher overflowed; re-reading", "path", r.f.path)
			} else {
				r.f.log.Warn("flag file watcher error; re-reading", "path", r.f.path, "error", err)
			}
			debounce.Reset(r.f.debounce)
		case <-debounce.C:
			r.check(ctx)
		case <-poll.C:
			// A steady stream of events keeps resetting the debounce;
			// the poll also bounds how long a change can wait.
			r.check(ctx)
		}
	}
}

func (r *runner) close() {
	if r.watcher != nil {
		// Close also waits for the watcher's own goroutine to finish.
		if err := r.watcher.Close(); err != nil {
			r.f.log.Debug("closing flag file watcher", "path", r.f.path, "error", err)
		}
	}
}

// ensureWatch (re)establishes the watch on the directory. It is called
// before every read: a change made between the watch and the first read is
// seen as an event rather than missed until the next poll, and a directory
// that was missing or could not be watched is retried at each poll tick.
func (r *runner) ensureWatch() {
	if r.watching {
		return
	}
	if r.watcher == nil {
		w, err := r.f.newWatcher()
		if err != nil {
			r.watchFailure("cannot create a file watcher", err)
			return
		}
		r.watcher = w
	}
	if err := r.watcher.Add(r.dir); err != nil {
		r.watchFailure("cannot watch the flag file's directory", err)
		return
	}
	r.events, r.errs = r.watcher.Events, r.watcher.Errors
	r.watching = true
	// Worth more than a debug line only when it ends a logged failure.
	level := slog.LevelDebug
	if r.watchFailed {
		r.watchFailed = false
		level = slog.LevelInfo
	}
	r.f.log.Log(context.Background(), level, "watching the flag file's directory", "path", r.f.path, "dir", r.dir)
}

func (r *runner) watchFailure(msg string, err error) {
	if r.watchFailed {
		return
	}
	r.watchFailed = true
	r.f.log.Warn(msg+"; relying on polling", "path", r.f.path, "dir", r.dir,
		"poll_interval", r.f.poll, "error", err)
}

// dropWatcher forgets a watcher that can no longer deliver, so that the
// next check builds a new one.
func (r *runner) dropWatcher() {
	r.close()
	r.watcher, r.events, r.errs, r.watching = nil, nil, nil, false
}

// relevant tells whether ev may have changed what the flag file reads as.
func (r *runner) relevant(ev fsnotify.Event) bool {
	name := filepath.Clean(ev.Name)
	if name == r.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			// The watch died with the directory. Remove tidies up on
			// backends that do not drop it themselves; the error on
			// those that did is expected.
			_ = r.watcher.Remove(r.dir)
			r.watching = false
			// Counts as the logged failure: retries stay quiet until
			// the watch is back.
			r.watchFailed = true
			r.f.log.Warn("the flag file's directory went away; relying on polling until it is back",
				"path", r.f.path, "dir", r.dir)
		}
		return true
	}
	return filepath.Dir(name) == r.dir && r.names[filepath.Base(name)]
}

// check reads the file and tells the sink if anything changed.
func (r *runner) check(ctx context.Context) {
	r.ensureWatch()
	// A swapped symlink changes which names matter; whatever the read
	// finds, the names are taken afresh once it is done.
	defer func() { r.names = linkNames(r.dir, r.base) }()

	before, statErr := os.Stat(r.abs)
	data, err := r.f.readFile(r.abs)
	switch {
	case err == nil && r.unchanged(data):
		return
	case err != nil && r.sameLoss(r.loss(err)):
		return
	}
	if err != nil {
		// A failure may be the gap in a delete-and-recreate save; give
		// the writer a moment before calling the file lost.
		if !sleep(ctx, r.f.settle) {
			return
		}
		data, err = r.f.readFile(r.abs)
	}
	if err == nil && !(statErr == nil && r.atRest(before, data)) {
		data, err = r.settle(ctx, data)
	}
	if ctx.Err() != nil {
		return
	}
	switch {
	case errors.Is(err, errUnsettled):
		r.f.log.Debug("flag file still changing; waiting for the next event or poll", "path", r.f.path)
	case err != nil:
		r.lose(r.loss(err))
	default:
		r.deliver(data)
	}
}

// atRest tells whether data, read after before was taken, is the whole of
// a file nobody has written to for a settle period: the same size and
// modification time before and after the read, and that time at least a
// settle period ago. Such a file gains nothing from a second read, which
// is what lets a provider start from a file in well under a millisecond.
// File systems that keep whole seconds only (the modification time has no
// sub-second part) could hide a write of the last second; they settle.
func (r *runner) atRest(before os.FileInfo, data []byte) bool {
	after, err := os.Stat(r.abs)
	if err != nil || !after.Mode().IsRegular() || after.Size() != int64(len(data)) ||
		after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		return false
	}
	mod := after.ModTime()
	return mod.Nanosecond() != 0 && time.Since(mod) >= r.f.settle
}

// settle reads again until two reads in a row agree, so that a file that
// is being written is not taken for its final content.
func (r *runner) settle(ctx context.Context, prev []byte) ([]byte, error) {
	for range maxSettleReads {
		if !sleep(ctx, r.f.settle) {
			return nil, ctx.Err()
		}
		cur, err := r.f.readFile(r.abs)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(prev, cur) {
			return cur, nil
		}
		prev = cur
	}
	return nil, errUnsettled
}

// loss is what a failed read is reported as: a file over the bound as
// the *MessageTooLargeError that a sink tells from a loss, as the read
// made it; any other failure as a fileError.
func (r *runner) loss(err error) error {
	var tooLarge *MessageTooLargeError
	if errors.As(err, &tooLarge) {
		return err
	}
	return newFileError(r.f.path, err)
}

// unchanged tells whether delivering data would tell the sink nothing new.
func (r *runner) unchanged(data []byte) bool {
	return r.delivered && r.lostMsg == "" && len(data) == r.lastLen && maphash.Bytes(r.f.seed, data) == r.lastSum
}

// sameLoss tells whether err is the loss already reported. A different
// failure (a deleted file that comes back unreadable) is reported again.
func (r *runner) sameLoss(err error) bool {
	return r.lostMsg != "" && err.Error() == r.lostMsg
}

func (r *runner) lose(err error) {
	if r.sameLoss(err) {
		return
	}
	r.lostMsg = err.Error()
	// An optional file's absence, and its end, are no news.
	r.lostQuietly = r.f.optional && errors.Is(err, fs.ErrNotExist)
	level := slog.LevelWarn
	if r.lostQuietly {
		level = slog.LevelDebug
	}
	r.f.log.Log(context.Background(), level, "flag file lost", "path", r.f.path, "error", err)
	r.sink.Lost(err)
}

func (r *runner) deliver(data []byte) {
	// The first read of the check may have differed and the settled
	// content still be what was delivered last.
	if r.unchanged(data) {
		return
	}
	if r.lostMsg != "" {
		level := slog.LevelInfo
		if r.lostQuietly {
			level = slog.LevelDebug
		}
		r.f.log.Log(context.Background(), level, "flag file readable again", "path", r.f.path)
	} else {
		r.f.log.Debug("flag file changed", "path", r.f.path, "bytes", len(data))
	}
	r.delivered, r.lastLen, r.lastSum, r.lostMsg = true, len(data), maphash.Bytes(r.f.seed, data), ""
	// data was read for this delivery and is not kept: the sink may
	// keep it.
	r.sink.Update(Update{Flags: data, Origin: r.f.path})
}

// readRegular reads path as docread.RegularFile does. The refusal of a
// file over limit names the file shown, the path as configured, which is
// what the user knows it by.
func readRegular(path, shown string, limit int64) ([]byte, error) {
	data, err := docread.RegularFile(path, limit)
	var tooLarge *docread.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fileTooLarge(shown, tooLarge.Size, limit)
	}
	return data, err
}

func fileTooLarge(shown string, size, limit int64) error {
	return &MessageTooLargeError{Target: shown, Size: int(size), Limit: int(limit), Setting: "FileConfig.MaxSize"}
}

// linkNames returns the entries of dir that dir/base resolves through: base
// itself and, while base is a symlink, every link and directory on the way
// to its target that lies directly in dir. A Kubernetes ConfigMap volume
// gives flags.json → ..data/flags.json with ..data → ..2026_11_22_10_00_00.1,
// so its update, which renames a new link over ..data, is an event on one
// of these names. Targets outside dir are left to polling.
func linkNames(dir, base string) map[string]bool {
	names := map[string]bool{base: true}
	resolved := dir
	rest := []string{base}
	for hops := 0; len(rest) > 0; {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case ".":
			continue
		case "..":
			// resolved holds no symlinks, so going up is lexical.
			resolved = filepath.Join(resolved, "..")
			continue
		}
		if resolved == dir {
			names[comp] = true
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			// Whatever is missing can only appear through a name
			// already collected.
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			break
		}
		target, err := os.Readlink(next)
		if err != nil {
			break
		}
		if filepath.IsAbs(target) {
			vol := filepath.VolumeName(target)
			resolved = vol + string(filepath.Separator)
			target = target[len(vol):]
		}
		rest = append(splitPath(target), rest...)
	}
	return names
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return os.IsPathSeparator(uint8(r)) })
}
