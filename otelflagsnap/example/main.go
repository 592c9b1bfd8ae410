// Command example serves a flagsnap provider's metrics for Prometheus to
// scrape: OpenTelemetry's Prometheus exporter reads the instruments of
// otelflagsnap through an SDK meter provider, and promhttp serves them.
//
//	go run ./example                 # from otelflagsnap/; Ctrl-C to stop
//	curl -s http://127.0.0.1:9464/metrics | grep -E '^(feature_flag|flagsnap)_'
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprometheus "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/otelflagsnap"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9464", "address to serve /metrics on")
	path := flag.String("flags", defaultFlagFile(), "flag file to evaluate")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving http://%s/metrics", ln.Addr())
	if err := serve(ctx, ln, *path); err != nil {
		log.Fatal(err)
	}
}

// serve evaluates a few flags of the file at path, then serves the
// metrics on ln until ctx is done.
func serve(ctx context.Context, ln net.Listener, path string) error {
	provider, err := flagsnap.NewProvider(flagsnap.WithFile(path))
	if err != nil {
		return err
	}
	if err := openfeature.SetProviderAndWait(provider); err != nil {
		return err
	}
	defer openfeature.Shutdown()

	handler, stopMetrics, err := metricsHandler(provider)
	if err != nil {
		return err
	}
	defer stopMetrics(context.Background())

	evaluate(ctx, openfeature.NewDefaultClient())

	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// metricsHandler registers the provider's metrics with a meter provider
// that the Prometheus exporter reads, and returns the handler of
// /metrics and what stops them.
func metricsHandler(provider *flagsnap.Provider) (http.Handler, func(context.Context) error, error) {
	// A registry of its own, rather than Prometheus's global one, shows
	// the flag metrics alone.
	registry := prometheus.NewRegistry()
	exporter, err := otelprometheus.New(otelprometheus.WithRegisterer(registry))
	if err != nil {
		return nil, nil, err
	}
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	unregister, err := otelflagsnap.Register(provider, otelflagsnap.WithMeterProvider(meters))
	if err != nil {
		return nil, nil, errors.Join(err, meters.Shutdown(context.Background()))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	stop := func(ctx context.Context) error { return errors.Join(unregister(), meters.Shutdown(ctx)) }
	return mux, stop, nil
}

// evaluate asks for three flags for each of a few users, and for one key
// the flag file does not have.
func evaluate(ctx context.Context, client *openfeature.Client) {
	users := []struct{ id, email, version string }{
		{"user-1", "ada@example.com", "2.5.0"},
		{"user-2", "grace@elsewhere.org", "2.3.9"},
		{"user-3", "linus@elsewhere.org", "3.0.0"},
		{"user-4", "barbara@example.com", "1.9.2"},
	}
	for _, u := range users {
		ec := openfeature.NewEvaluationContext(u.id, map[string]any{"email": u.email, "appVersion": u.version})
		client.BooleanValue(ctx, "new-checkout", false, ec)
		client.BooleanValue(ctx, "dark-mode", false, ec)
		client.StringValue(ctx, "banner-color", "red", ec)
	}
	client.BooleanValue(ctx, "new-chekout", false, openfeature.EvaluationContext{}) // a typo: a missing key
}

// defaultFlagFile finds the repository's example flag file from
// otelflagsnap/ or from this directory.
func defaultFlagFile() string {
	for _, p := range []string{"../examples/file/flags.json", "../../examples/file/flags.json"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "flags.json"
}
