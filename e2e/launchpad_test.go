package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/flagsnap/flagsnap/syncserver"
)

// launchpad is one scenario's flag origin, as the testbed's control program
// runs it: a sync server (in-process mode) or a flag file (file mode) that
// can be taken away for a while and whose changing-flag can be flipped.
type launchpad struct {
	srv  *syncserver.Server // in-process mode
	path string             // file mode: the flag file
	file string             // file mode: the selector whose document is in the file

	mu        sync.Mutex
	sets      map[string][]byte
	lost      bool
	restoreAt time.Time
	failure   error // from a restore that ran in the background

	stopRestore chan struct{}
	restoring   sync.WaitGroup
}

type serverSetup struct {
	tls    bool
	socket string     // listen on this unix socket instead of a loopback port
	refuse codes.Code // answer every sync call with this status; OK serves
}

// startServer serves config c the way flagd does with that configuration:
// every source under its URI as selector, the static context as
// sync_context, or from GetMetadata only when sync metadata is disabled.
func startServer(tb *testbed, c launchpadConfig, setup serverSetup) (*launchpad, error) {
	sets, err := tb.sets(c)
	if err != nil {
		return nil, err
	}
	// flagd sends what it read re-encoded, not the file as written: the
	// scenarios have to pass on that form, which is what users get.
	opts := []syncserver.Option{syncserver.WithFlagdEncoding(allFlagsURI)}
	for sel, doc := range sets {
		if sel == "" {
			opts = append(opts, syncserver.WithFlags(doc))
		} else {
			opts = append(opts, syncserver.WithSelectorFlags(sel, doc))
		}
	}
	if c.ContextValue != nil {
		if c.DisableSyncMetadata {
			opts = append(opts, syncserver.WithMetadata(c.ContextValue))
		} else {
			opts = append(opts, syncserver.WithSyncContext(c.ContextValue))
		}
	}
	if setup.tls {
		opts = append(opts, syncserver.WithTLS())
	}
	if setup.refuse != codes.OK {
		opts = append(opts, syncserver.WithStatus(setup.refuse, "refused by the test server"))
	}
	srv, err := syncserver.New(opts...)
	if err != nil {
		return nil, err
	}
	if setup.socket != "" {
		err = srv.ListenUnix(setup.socket)
	} else {
		err = srv.ListenTCP("127.0.0.1:0")
	}
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &launchpad{srv: srv, sets: sets, stopRestore: make(chan struct{})}, nil
}

// writeFlagFile is file mode's server: the document a server would send for
// selector, in a file of its own.
func writeFlagFile(tb *testbed, c launchpadConfig, dir, selector string) (*launchpad, error) {
	sets, err := tb.sets(c)
	if err != nil {
		return nil, err
	}
	if _, ok := sets[selector]; !ok {
		return nil, fmt.Errorf("the launchpad configuration serves no %q", selector)
	}
	l := &launchpad{path: filepath.Join(dir, "flags.json"), file: selector, sets: sets, stopRestore: make(chan struct{})}
	if err := os.WriteFile(l.path, sets[selector], 0o600); err != nil {
		return nil, err
	}
	return l, nil
}

// loseConnection stops the server or deletes the file now, and brings it
// back after d without waiting for that, as the control program's
// restart?seconds=N does: the scenario goes on watching events meanwhile.
func (l *launchpad) loseConnection(d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return errors.New("the connection is already lost")
	}
	if l.stopRestore == nil {
		return errors.New("the launchpad is closed")
	}
	if l.srv != nil {
		l.srv.Stop()
	} else if err := os.Remove(l.path); err != nil {
		return err
	}
	l.lost = true
	l.restoreAt = time.Now().Add(d)
	stop := l.stopRestore
	l.restoring.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-stop:
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		var err error
		if l.srv != nil {
			err = l.srv.Restart()
		} else {
			err = os.WriteFile(l.path, l.sets[l.file], 0o600)
		}
		if err != nil {
			l.failure = fmt.Errorf("bringing the connection back: %w", err)
			return
		}
		l.lost = false
	})
	return nil
}

// back is when a lost connection returns: the zero time if it is not lost.
func (l *launchpad) back() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lost {
		return time.Time{}
	}
	return l.restoreAt
}

func (l *launchpad) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failure
}

// change is the control program's "change": flip changing-flag in every
// document holding it and deliver the new documents. A lost file is only
// rewritten when it comes back.
func (l *launchpad) change() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	changed := false
	for sel, doc := range l.sets {
		out, ok, err := toggleChangingFlag(doc)
		if err != nil {
			return fmt.Errorf("document %q: %w", sel, err)
		}
		if !ok {
			continue
		}
		changed = true
		l.sets[sel] = out
		if l.srv != nil {
			l.srv.SetSelectorFlags(sel, out)
		}
	}
	if !changed {
		return errors.New("no served document has changing-flag")
	}
	if l.srv == nil && !l.lost {
		// Written in place, as the control program does, rather than
		// renamed over: the provider has to cope with a file caught
		// half written.
		return os.WriteFile(l.path, l.sets[l.file], 0o600)
	}
	return nil
}

// cancelRestore calls off a pending restore and waits until it cannot run.
func (l *launchpad) cancelRestore() {
	l.mu.Lock()
	stop := l.stopRestore
	l.stopRestore = nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	l.restoring.Wait()
}

// close stops the server and removes the flag file.
func (l *launchpad) close() {
	l.cancelRestore()
	if l.srv != nil {
		l.srv.Close()
	}
	if l.path != "" {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.failure = errors.Join(l.failure, err)
		}
	}
}
