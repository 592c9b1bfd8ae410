// Command grpc runs a flagd sync server on a local port, serving the flag
// file of the file example, connects flagsnap to it, evaluates a flag, then
// changes the flags on the server and prints the CONFIGURATION_CHANGED
// event the provider sends.
//
//	go run ./examples/grpc -once    # one change, then exit
//	go run ./examples/grpc          # toggle a flag every few seconds until interrupted
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/syncserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("grpc", flag.ContinueOnError)
	path := fs.String("flags", defaultFlagFile(), "flag file the server serves")
	once := fs.Bool("once", false, "make one change and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	doc, err := os.ReadFile(*path)
	if err != nil {
		return err
	}

	server, err := startSyncServer(doc)
	if err != nil {
		return err
	}
	defer server.Close()
	fmt.Fprintf(out, "sync server on %s\n", server.Addr())

	if err := useFlagsnap(server.Port()); err != nil {
		return err
	}
	defer openfeature.Shutdown()
	return toggleNewCheckout(ctx, server, doc, *once, out)
}

// startSyncServer starts a sync server with doc on a free local port.
func startSyncServer(doc []byte) (*syncserver.Server, error) {
	server, err := syncserver.New(syncserver.WithFlags(doc))
	if err != nil {
		return nil, err
	}
	if err := server.ListenTCP("127.0.0.1:0"); err != nil {
		server.Close()
		return nil, err
	}
	return server, nil
}

// useFlagsnap makes flagsnap, in-process against the server on port,
// OpenFeature's provider, once it has the flags.
func useFlagsnap(port int) error {
	provider, err := flagsnap.NewProvider(
		flagsnap.WithResolver(flagsnap.ResolverInProcess),
		flagsnap.WithHost("127.0.0.1"),
		flagsnap.WithPort(port),
	)
	if err != nil {
		return err
	}
	return openfeature.SetProviderAndWait(provider)
}

// toggleNewCheckout switches new-checkout's default variant on the server
// and shows what a user gets after each CONFIGURATION_CHANGED, until ctx
// ends, or once.
func toggleNewCheckout(ctx context.Context, server *syncserver.Server, doc []byte, once bool, out io.Writer) error {
	client := openfeature.NewDefaultClient()
	changes := make(chan openfeature.EventDetails, 8)
	onChange := func(d openfeature.EventDetails) { changes <- d }
	client.AddHandler(openfeature.ProviderConfigChange, &onChange)

	user := openfeature.NewEvaluationContext("user-2", map[string]any{"email": "grace@elsewhere.org"})
	printNewCheckout := func() {
		d, _ := client.BooleanValueDetails(ctx, "new-checkout", false, user)
		fmt.Fprintf(out, "new-checkout for user-2: %v (variant %s, reason %s)\n", d.Value, d.Variant, d.Reason)
	}
	printNewCheckout()

	enabled := false
	for {
		enabled = !enabled
		changed, err := withDefault(doc, "new-checkout", map[bool]string{true: "on", false: "off"}[enabled])
		if err != nil {
			return err
		}
		server.SetFlags(changed)
		select {
		case d := <-changes:
			fmt.Fprintf(out, "PROVIDER_CONFIGURATION_CHANGED %v\n", d.FlagChanges)
		case <-time.After(5 * time.Second):
			return errors.New("no configuration change within 5s")
		case <-ctx.Done():
			return nil
		}
		printNewCheckout()
		if once {
			return nil
		}
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
			return nil
		}
	}
}

// withDefault returns the flag document with one flag's default variant
// changed and its targeting removed, so the change shows for everyone.
func withDefault(doc []byte, key, variant string) ([]byte, error) {
	var set map[string]any
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, err
	}
	flags, _ := set["flags"].(map[string]any)
	f, ok := flags[key].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no flag %q", key)
	}
	f["defaultVariant"] = variant
	delete(f, "targeting")
	return json.Marshal(set)
}

// defaultFlagFile finds the file example's flags.json from the repository
// root or from this directory.
func defaultFlagFile() string {
	for _, p := range []string{"examples/file/flags.json", "../file/flags.json"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "examples/file/flags.json"
}
