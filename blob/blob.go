package blob

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	gcblob "gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://

	"github.com/flagsnap/flagsnap/source"
)

// Source is a [source.Source] that polls an object for the flag document.
// [Open] makes one; [flagsnap.WithSource] runs it.
//
// [flagsnap.WithSource]: https://pkg.go.dev/github.com/flagsnap/flagsnap#WithSource
type Source struct {
	poll   *source.Poll
	bucket *gcblob.Bucket
	origin string

	mu    sync.Mutex
	state state
}

// state is where a Source is in its life: Run may start it once, and the
// bucket is closed when Run returns or by Close.
type state uint8

const (
	idle state = iota
	running
	closed
)

// Open checks url, opens its bucket with the credentials of the
// environment as gocloud.dev resolves them, and returns a source that
// polls the object. It makes no request to the store: a missing object or
// refused credentials are reported by the source once it runs, as a loss,
// and by the provider's Init.
//
// The URL names the bucket and the object's key; its query parameters
// configure the client as gocloud.dev reads them, for example
//
//	s3://bucket/flags.json?region=eu-west-1
//	s3://bucket/flags.json?endpoint=http://127.0.0.1:9000&use_path_style=true&disable_https=true&region=us-east-1
//	gs://bucket/path/flags.yaml
//	azblob://container/flags.json
//	azblob://container/flags.json?protocol=http&domain=127.0.0.1:10000
//
// The source holds the bucket until Run returns; call Close to release a
// source that will not run. ctx bounds the opening only.
func Open(ctx context.Context, url string, opts ...Option) (*Source, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	u, err := parseObjectURL(url)
	if err != nil {
		return nil, err
	}
	bucket, err := gcblob.OpenBucket(ctx, u.bucketURL())
	if err != nil {
		return nil, &URLError{URL: u.String(), Reason: "gocloud.dev cannot open the bucket: check the query parameters, and the credentials of the environment", Err: err}
	}
	f := &fetcher{bucket: bucket, key: u.key, origin: u.String(), timeout: cfg.timeout, maxSize: cfg.maxSize}
	poll, err := source.NewPoll(source.PollConfig{Fetcher: f, Origin: f.origin, Interval: cfg.interval, Logger: cfg.log})
	if err != nil {
		_ = bucket.Close()
		return nil, err
	}
	if cfg.log != nil {
		cfg.log.Debug("object store opened", slog.String("origin", f.origin), slog.Duration("interval", cfg.interval),
			slog.Duration("timeout", cfg.timeout), slog.Int64("max_size", cfg.maxSize))
	}
	return &Source{poll: poll, bucket: bucket, origin: f.origin}, nil
}

// Origin is the object's URL without its query parameters, which
// configure the client: the provider names the source by it in
// SourceStatus, events and messages.
func (s *Source) Origin() string { return s.origin }

// Run implements [source.Source]: it reads the object at once, then polls
// its attributes every interval and downloads it when it changed, until
// ctx is done; it closes the bucket before it returns. How it delivers,
// reports a loss and retries is [source.Poll]'s.
func (s *Source) Run(ctx context.Context, sink source.Sink) error {
	s.mu.Lock()
	switch s.state {
	case running:
		s.mu.Unlock()
		return errors.New("blob: Source.Run called more than once")
	case closed:
		s.mu.Unlock()
		return errors.New("blob: Source.Run called after Close or after Run returned")
	}
	s.state = running
	s.mu.Unlock()
	defer s.release()
	return s.poll.Run(ctx, sink)
}

// Close releases the bucket of a source that never ran. Run releases it
// itself when it returns, so Close is needed only for a source that is
// not given to a provider, or whose provider was never initialised. It
// does nothing while Run runs, and after the bucket was released.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.state != idle {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	return s.release()
}

// release closes the bucket, once. The connections its client made stay
// in the SDK's pool, which this package cannot reach (the AWS SDK keeps a
// transport per client, the GCS and Azure SDKs one per process): idle
// ones end after the transport's idle timeout, 90s in all three.
func (s *Source) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == closed {
		return nil
	}
	s.state = closed
	return s.bucket.Close()
}
