// Command file evaluates the flags of a local flag file with flagsnap and
// prints every configuration change while the file is edited.
//
//	go run ./examples/file          # evaluate, then watch flags.json until interrupted
//	go run ./examples/file -once    # evaluate and exit
//
// search-engine is a time-based rollout: the weight of "vector" grows
// with every second since 2026-01-01 and the weight of "legacy" shrinks
// until 2027-01-01, so users move over gradually and never back.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run evaluates the flags, then prints configuration changes until ctx is
// done (unless -once is given).
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("file", flag.ContinueOnError)
	path := fs.String("flags", defaultFlagFile(), "flag file to read and watch")
	once := fs.Bool("once", false, "evaluate once and exit instead of watching the file")
	if err := fs.Parse(args); err != nil {
		return err
	}

	provider, err := flagsnap.NewProvider(flagsnap.WithFile(*path))
	if err != nil {
		return err
	}
	if err := openfeature.SetProviderAndWait(provider); err != nil {
		return err
	}
	defer openfeature.Shutdown()

	client := openfeature.NewDefaultClient()
	printFlags(ctx, client, out)
	if *once {
		return nil
	}
	watchChanges(ctx, client, *path, out)
	return nil
}

// printFlags prints what each of a few users gets from the four flags of
// the bundled flags.json, and why.
func printFlags(ctx context.Context, client *openfeature.Client, out io.Writer) {
	users := []struct {
		id, email, version string
	}{
		{"user-1", "ada@example.com", "2.5.0"},
		{"user-2", "grace@elsewhere.org", "2.3.9"},
		{"user-3", "linus@elsewhere.org", "3.0.0"},
		{"user-4", "barbara@example.com", "1.9.2"},
	}
	for _, u := range users {
		ec := openfeature.NewEvaluationContext(u.id, map[string]any{"email": u.email, "appVersion": u.version})
		checkout, _ := client.BooleanValueDetails(ctx, "new-checkout", false, ec)
		color, _ := client.StringValueDetails(ctx, "banner-color", "red", ec)
		dark, _ := client.BooleanValueDetails(ctx, "dark-mode", false, ec)
		search, _ := client.StringValueDetails(ctx, "search-engine", "legacy", ec)
		fmt.Fprintf(out, "%s\n", u.id)
		fmt.Fprintf(out, "  new-checkout  %-6v variant=%-6s reason=%s\n", checkout.Value, checkout.Variant, checkout.Reason)
		fmt.Fprintf(out, "  banner-color  %-6v variant=%-6s reason=%s\n", color.Value, color.Variant, color.Reason)
		fmt.Fprintf(out, "  dark-mode     %-6v variant=%-6s reason=%s\n", dark.Value, dark.Variant, dark.Reason)
		fmt.Fprintf(out, "  search-engine %-6v variant=%-6s reason=%s\n", search.Value, search.Variant, search.Reason)
	}
}

// watchChanges prints every configuration change, and every error or
// staleness the provider reports, while the file at path is edited, until
// ctx is done.
func watchChanges(ctx context.Context, client *openfeature.Client, path string, out io.Writer) {
	changed := func(d openfeature.EventDetails) {
		fmt.Fprintf(out, "configuration changed: %v\n", d.FlagChanges)
	}
	problem := func(d openfeature.EventDetails) {
		fmt.Fprintf(out, "%s\n", d.Message)
	}
	client.AddHandler(openfeature.ProviderConfigChange, &changed)
	client.AddHandler(openfeature.ProviderError, &problem)
	client.AddHandler(openfeature.ProviderStale, &problem)
	fmt.Fprintf(out, "watching %s; edit it, or press Ctrl-C to stop\n", path)
	<-ctx.Done()
}

// defaultFlagFile finds the bundled flags.json whether the program runs
// from the repository root or from its own directory.
func defaultFlagFile() string {
	for _, p := range []string{"examples/file/flags.json", "flags.json"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "flags.json"
}
