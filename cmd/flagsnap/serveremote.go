package main

// serve's FILE may be a URL or an object in a bucket rather than a file,
// so that several serve replicas can front one origin.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/flagsnap/flagsnap/blob"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
)

// remoteTimeout bounds each request to a URL, and the first fetch, which
// serve waits for before it serves anything.
const remoteTimeout = 30 * time.Second

// remoteOptions are serve's options for a FILE that is a URL or an
// object; the header and the Authorization file are a URL's alone.
type remoteOptions struct {
	pollInterval time.Duration
	header       headerValues
	authFile     string
}

// headerValues is --header, repeatable, each "Name: value".
type headerValues http.Header

func (h headerValues) String() string { return "" }

func (h headerValues) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf(`want "Name: value", not %q`, s)
	}
	http.Header(h).Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

// remoteScheme is the scheme of a FILE that names a URL or an object, ""
// for a file.
func remoteScheme(file string) string {
	u, err := url.Parse(file)
	if err != nil || !strings.Contains(file, "://") {
		return ""
	}
	switch u.Scheme {
	case "http", "https", "s3", "gs", "azblob":
		return u.Scheme
	}
	return ""
}

// remoteName is the name a source selector may give a URL or an object:
// the last element of its path.
func remoteName(file string) string {
	u, err := url.Parse(file)
	if err != nil {
		return file
	}
	return path.Base(u.Path)
}

// openSource builds the source that follows file: a URL's, an object's or
// a file's.
func (o remoteOptions) openSource(ctx context.Context, file string) (source.Source, error) {
	switch remoteScheme(file) {
	case "":
		return source.NewFile(source.FileConfig{Path: file})
	case "s3", "gs", "azblob":
		return blob.Open(ctx, file, blob.WithPollInterval(o.pollInterval), blob.WithTimeout(remoteTimeout))
	}
	return source.NewHTTP(source.HTTPConfig{
		URL:               file,
		PollInterval:      o.pollInterval,
		Header:            http.Header(o.header),
		AuthorizationFile: o.authFile,
		Timeout:           remoteTimeout,
	})
}

// loadRemote fetches the document at file once and loads it, as
// loadFlags does a file.
func (o remoteOptions) loadRemote(ctx context.Context, file string) ([]byte, *evaluator.FlagSet, error) {
	src, err := o.openSource(ctx, file)
	if err != nil {
		return nil, nil, err
	}
	doc, err := fetchFirst(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	set, err := evaluator.Load(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", file, err)
	}
	return doc, set, nil
}

// fetchFirst runs src until it delivers its first document, or reports
// its first failure.
func fetchFirst(ctx context.Context, src source.Source) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	first := &firstDocument{cancel: cancel}
	if err := src.Run(ctx, first); err != nil {
		return nil, err
	}
	switch {
	case first.doc != nil:
		return first.doc, nil
	case first.err != nil:
		return nil, first.err
	}
	return nil, errors.New("no flag document within " + remoteTimeout.String())
}

// firstDocument is a sink that keeps the first document or failure and
// stops the source.
type firstDocument struct {
	cancel context.CancelFunc
	doc    []byte
	err    error
}

func (f *firstDocument) Update(u source.Update) error {
	if f.doc == nil && f.err == nil {
		f.doc = u.Flags
	}
	f.cancel()
	return nil
}

func (f *firstDocument) Lost(err error) {
	if f.doc == nil && f.err == nil {
		f.err = err
	}
	f.cancel()
}

func (f *firstDocument) Fatal(err error) { f.Lost(err) }
