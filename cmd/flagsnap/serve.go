package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

const serveUsage = `Usage: flagsnap serve FILE [--addr 127.0.0.1:8015] [--socket PATH] [--tls-cert F --tls-key F]
                      [--selector-dir DIR] [--context-value KEY=VALUE]...

Serves a flag file over flagd.sync.v1 (the protocol of flagd's sync port),
so that a provider in in-process mode can be tried without flagd: every
change to the file is pushed to every stream. A change that does not parse
is reported and not sent; the streams keep the last good flags. Calls
without a selector get FILE; with --selector-dir, every JSON or YAML file
in DIR (when serve starts) is served, and watched, under its file name as
selector. --context-value sets the sync context sent with the flags and
the GetMetadata answer, as flagd's option of that name does.

Example:
  flagsnap serve flags.json
  then, in a program:
    flagsnap.NewProvider(flagsnap.WithResolver(flagsnap.ResolverInProcess),
        flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(8015))
`

// contextValues is --context-value, repeatable.
type contextValues map[string]any

func (c contextValues) String() string { return "" }

func (c contextValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, not %q", s)
	}
	c[k] = v
	return nil
}

// served is one watched file and the selector it is served under ("" for
// calls without one).
type served struct {
	path, selector string
	doc            []byte // as read when serve started
}

func (c *cmd) serve(ctx context.Context, args []string) int {
	fs := c.flags(serveUsage)
	addr := fs.String("addr", "127.0.0.1:8015", "TCP address to listen on")
	socket := fs.String("socket", "", "listen on this unix socket instead of TCP")
	certFile := fs.String("tls-cert", "", "serve TLS with this certificate (PEM) ...")
	keyFile := fs.String("tls-key", "", "... and this key (PEM)")
	selectorDir := fs.String("selector-dir", "", "also serve every flag file in this directory under its name as selector")
	syncCtx := contextValues{}
	fs.Var(syncCtx, "context-value", "KEY=VALUE added to the sync context and GetMetadata (repeatable)")
	pos, status, ok := c.parseExactly(fs, args, 1, "one FILE")
	if !ok {
		return status
	}
	if *socket != "" && isSet(fs, "addr") {
		return c.fail(exitBadInput, "give --addr or --socket, not both")
	}
	if (*certFile == "") != (*keyFile == "") {
		return c.fail(exitBadInput, "--tls-cert and --tls-key go together")
	}
	files := []served{{path: pos[0]}}
	if *selectorDir != "" {
		more, err := selectorFiles(*selectorDir)
		if err != nil {
			return c.fail(exitBadInput, "--selector-dir: %v", err)
		}
		files = append(files, more...)
	}
	opts := []syncserver.Option{syncserver.WithSyncContext(syncCtx), syncserver.WithMetadata(syncCtx)}
	for i := range files {
		f := &files[i]
		var err error
		if f.doc, _, err = loadFlags(f.path); err != nil {
			return c.fail(exitBadInput, "%v", err)
		}
		opts = append(opts, syncserver.WithSelectorFlags(f.selector, f.doc))
	}
	if *certFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return c.fail(exitBadInput, "--tls-cert/--tls-key: %v", err)
		}
		opts = append(opts, syncserver.WithCertificate(cert))
	}
	srv, err := syncserver.New(opts...)
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	defer srv.Close()
	if *socket != "" {
		err = srv.ListenUnix(*socket)
	} else {
		err = srv.ListenTCP(*addr)
	}
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	out := &lockedWriter{w: c.stdout}
	fmt.Fprintf(out, "serving %s on %s%s\n", files[0].path, srv.Addr(), describeSelectors(files[1:], *certFile != ""))

	watchCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	failed := make(chan error, len(files))
	for _, f := range files {
		src, err := source.NewFile(source.FileConfig{Path: f.path})
		if err != nil {
			stop()
			wg.Wait()
			return c.fail(exitBadInput, "%v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sink := &pusher{srv: srv, file: f, out: out, last: f.doc}
			if err := src.Run(watchCtx, sink); err != nil {
				failed <- fmt.Errorf("watching %s: %w", f.path, err)
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-failed:
	}
	stop()
	wg.Wait()
	if runErr != nil {
		return c.fail(exitNegative, "%v", runErr)
	}
	fmt.Fprintln(out, "stopped")
	return exitOK
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func describeSelectors(files []served, tls bool) string {
	var b strings.Builder
	if tls {
		b.WriteString(" (TLS)")
	}
	if len(files) > 0 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.selector
		}
		fmt.Fprintf(&b, ", selectors: %s", strings.Join(names, ", "))
	}
	return b.String()
}

// selectorFiles lists the flag files of dir, each under its name.
func selectorFiles(dir string) ([]served, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", dir, readError(err))
	}
	var out []served
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".json", ".yaml", ".yml":
		default:
			continue
		}
		if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		out = append(out, served{path: filepath.Join(dir, e.Name()), selector: e.Name()})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .json, .yaml or .yml file", dir)
	}
	slices.SortFunc(out, func(a, b served) int { return strings.Compare(a.selector, b.selector) })
	return out, nil
}

// pusher sends each new version of a file to the streams that serve it.
// The sync source calls it from one goroutine.
type pusher struct {
	srv  *syncserver.Server
	file served
	out  io.Writer
	last []byte
}

func (p *pusher) Update(u source.Update) error {
	// The first read is what the server already serves, unless the file
	// changed while serve was starting.
	if bytes.Equal(u.Flags, p.last) {
		return nil
	}
	set, err := evaluator.Load(u.Flags)
	if err != nil {
		fmt.Fprintf(p.out, "%s: not sent: %v\n", p.file.path, err)
		return err
	}
	p.last = u.Flags
	p.srv.SetSelectorFlags(p.file.selector, u.Flags)
	fmt.Fprintf(p.out, "%s: sent %s (%s open)\n", p.file.path, plural(set.Len(), "flag"), plural(p.srv.Streams(), "stream"))
	return nil
}

func (p *pusher) Lost(err error) {
	fmt.Fprintf(p.out, "%s: %v; the streams keep the last flags\n", p.file.path, err)
}

func (p *pusher) Fatal(err error) {
	fmt.Fprintf(p.out, "%s: %v\n", p.file.path, err)
}

// lockedWriter serialises the lines of the watchers of several files.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
