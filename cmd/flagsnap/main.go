package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/flagsnap/flagsnap/internal/suggest"
)

// Exit statuses shared by every command.
const (
	exitOK          = 0
	exitNegative    = 1 // an invalid file, a resolution that failed
	exitBadInput    = 2 // a file that cannot be read, an unknown flag, a bad option
	exitInterrupted = 130
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: args without the program name, and the exit
// status to end with. Ctrl-C and SIGTERM end long-running commands cleanly.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runContext(ctx, args, stdout, stderr)
}

// runContext is run with the context that ends serve and simulate.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return exitBadInput
	}
	c := &cmd{name: args[0], stdout: stdout, stderr: stderr}
	switch args[0] {
	case "validate":
		return c.validate(args[1:])
	case "eval":
		return c.eval(args[1:])
	case "simulate":
		return c.simulate(ctx, args[1:])
	case "serve":
		return c.serve(ctx, args[1:])
	case "usage":
		return c.usageCmd(args[1:])
	case "version", "-version", "--version":
		c.name = "version"
		return c.version(args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "flagsnap: unknown command %q (commands: validate, eval, simulate, serve, usage, version; see flagsnap --help)\n", args[0])
	return exitBadInput
}

const mainUsage = `flagsnap checks, explains, simulates and serves flagd flag files, and finds stale flags.

Usage:
  flagsnap validate FILE...            report every problem, with file, line and column
  flagsnap eval FILE FLAG              resolve a flag for a context; --explain says why
  flagsnap simulate FILE FLAG          variant shares of many users; --against compares files
  flagsnap serve FILE                  serve a watched file over flagd.sync.v1 (and HTTP, OFREP)
  flagsnap usage FILE USAGE_JSON       the flags a service's usage snapshot shows stale
  flagsnap version                     the command's version and the Go version it was built with

Run 'flagsnap COMMAND --help' for the options and an example of each.
`

// cmd is one invocation of a command.
type cmd struct {
	name           string
	stdout, stderr io.Writer
	printUsage     func()
}

// fail prints one line to stderr and returns status.
func (c *cmd) fail(status int, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "flagsnap %s: %s\n", c.name, fmt.Sprintf(format, args...))
	return status
}

// newFlagSet makes a command's option set, which prints usage and the
// options when --help asks for them.
func (c *cmd) newFlagSet(usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("flagsnap "+c.name, flag.ContinueOnError)
	// The flag package's own messages come with the whole usage; a bad
	// option gets one line instead (see parse).
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every error too; the usage is only
	// printed when asked for (see parse).
	fs.Usage = func() {}
	c.printUsage = func() {
		fmt.Fprint(c.stdout, usage)
		options := 0
		fs.VisitAll(func(*flag.Flag) { options++ })
		if options > 0 {
			fmt.Fprintln(c.stdout, "\nOptions:")
			printOptions(c.stdout, fs)
		}
	}
	return fs
}

// printOptions lists a command's options as its usage writes them, with
// two dashes (the flag package's own list has one), each with what it does
// and its default.
func printOptions(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if def := defaultText(f); def != "" {
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	})
}

// defaultText is an option's default as the list gives it, "" for none.
func defaultText(f *flag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "0s":
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return strconv.Quote(f.DefValue)
		}
	}
	return f.DefValue
}

// optionError is the flag package's error in the words of the commands:
// options with two dashes, and the option a misspelt one most likely
// meant.
func optionError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, unknown := strings.CutPrefix(msg, "flag provided but not defined: -"); unknown {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = "unknown option --" + name
		if near := suggest.Nearest(name, names); near != "" {
			msg += "; did you mean --" + near + "?"
		}
		return msg
	}
	fs.VisitAll(func(f *flag.Flag) { msg = strings.ReplaceAll(msg, " -"+f.Name, " --"+f.Name) })
	return msg
}

// errHelp means --help was asked for and answered.
var errHelp = errors.New("help")

// parse parses options and positional arguments in any order, as
// "flagsnap eval flags.json my-flag --explain" is written; everything after
// "--" is positional. A bad option is reported on one line.
func (c *cmd) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printUsage()
				return nil, errHelp
			}
			return nil, fmt.Errorf("%s (see flagsnap %s --help)", optionError(fs, err), c.name)
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(positional, rest...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// parseOrFail parses args and turns a failure into the exit status to
// return: ok is false when the command must stop.
func (c *cmd) parseOrFail(fs *flag.FlagSet, args []string) (positional []string, status int, ok bool) {
	positional, err := c.parse(fs, args)
	switch {
	case errors.Is(err, errHelp):
		return nil, exitOK, false
	case err != nil:
		return nil, c.fail(exitBadInput, "%v", err), false
	}
	return positional, 0, true
}

// parseExactly is parseOrFail for a command that takes n positional
// arguments, which want names.
func (c *cmd) parseExactly(fs *flag.FlagSet, args []string, n int, want string) (positional []string, status int, ok bool) {
	positional, status, ok = c.parseOrFail(fs, args)
	if ok && len(positional) != n {
		return nil, c.fail(exitBadInput, "want %s, got %d argument(s) (see flagsnap %s --help)", want, len(positional), c.name), false
	}
	return positional, status, ok
}

// checkOneOf checks an option's value against the accepted ones.
func checkOneOf(option, value string, accepted ...string) error {
	for _, a := range accepted {
		if value == a {
			return nil
		}
	}
	return fmt.Errorf("--%s must be %s, not %q", option, strings.Join(accepted, ", "), value)
}
