package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/flagsnap/flagsnap"
)

const usageUsage = `Usage: flagsnap usage FLAGS_FILE USAGE_JSON [--format text|json]

Compares a flag file with what a running service did with its flags: a
usage snapshot, the JSON of the flagsnap provider's Usage() (USAGE_JSON,
or - for stdin), which the service serves from a handler of its own. It
lists what is stale, in the order a cleanup would remove it:

  never evaluated   flags of the file that no evaluation asked for: removing
                    them from the file changes nothing
  only in bulk      flags that only bulk evaluations read (EvaluateAll, an
                    OFREP client such as a web page): a bulk evaluation reads
                    every flag, so ask its clients before removing them
  missing           keys the code asked for that the file does not define:
                    the code gets its default every time, and the call can go,
                    the most asked for first
  one variant       flags that served the same variant to every evaluation
                    (or the caller's default, for a disabled flag): hard-code
                    it, then remove the flag; the most evaluated first

A snapshot only knows the time since it began (its "since"), and the
service that took it: a flag read once a month, or by another service,
looks stale in a day's snapshot of this one.

Exit status: 0 nothing is stale, 1 something is, 2 bad input.

Example:
  curl -s localhost:8080/debug/flags/usage > usage.json
  flagsnap usage flags.json usage.json
  never evaluated  search-engine
  missing          new-chekout    asked 125 times
  one variant      dark-mode      "off" in all 5000 evaluations, the last at 2026-11-25T05:49:19Z
  flags.json: 2 of 4 flags stale, 1 missing key, since 2026-11-25T05:49:19Z
`

// staleEntry is one thing a cleanup would remove.
type staleEntry struct {
	Kind string `json:"kind"` // staleUnused, staleMissing or staleSingle
	Key  string `json:"key"`
	// Evaluations of the flag (its bulk evaluations, for staleBulk), or
	// of the missing key.
	Evaluations uint64 `json:"evaluations"`
	// Variant is the one variant a single-variant flag served; empty
	// when that was the caller's default.
	Variant       string    `json:"variant,omitempty"`
	LastEvaluated time.Time `json:"lastEvaluated,omitzero"`
	// NotInSnapshot: the flag was not in force when the snapshot was
	// taken, so the snapshot says nothing of it but that.
	NotInSnapshot bool `json:"notInSnapshot,omitempty"`
}

const (
	staleUnused  = "never evaluated"
	staleBulk    = "only in bulk"
	staleMissing = "missing"
	staleSingle  = "one variant"
)

// staleOrder is the order of the kinds in a report: what removing changes
// least first.
var staleOrder = map[string]int{staleUnused: 0, staleBulk: 1, staleMissing: 2, staleSingle: 3}

type usageReport struct {
	File           string       `json:"file"`
	Since          time.Time    `json:"since"`
	Flags          int          `json:"flags"`
	Stale          []staleEntry `json:"stale"`
	MissingDropped uint64       `json:"missingDropped,omitempty"`
	// Unknown are flags of the snapshot that the file does not define.
	Unknown []string `json:"unknown,omitempty"`
}

func (c *cmd) usageCmd(args []string) int {
	fs := c.newFlagSet(usageUsage)
	format := fs.String("format", "text", "output format: text or json")
	pos, status, ok := c.parseExactly(fs, args, 2, "FLAGS_FILE and USAGE_JSON")
	if !ok {
		return status
	}
	if err := checkOneOf("format", *format, "text", "json"); err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	path := pos[0]
	_, set, err := loadFlags(path)
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	u, err := readUsage(pos[1])
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	r := staleReport(path, set.Keys(), u)
	if *format == "json" {
		writeJSON(c.stdout, r)
	} else {
		printUsageReport(c.stdout, c.stderr, r)
	}
	if len(r.Stale) > 0 {
		return exitNegative
	}
	return exitOK
}

// readUsage reads a snapshot written by json.Marshal of flagsnap.Usage.
// Fields it does not know are an error: the file is something else, a
// flag file or a SourceStatus given by mistake.
func readUsage(path string) (flagsnap.Usage, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		data, err = readFrom(os.Stdin, -1, maxInput)
		name = "stdin"
	} else {
		data, err = readInput(path)
	}
	if err != nil {
		return flagsnap.Usage{}, fmt.Errorf("%s: %s", name, readError(err))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var u flagsnap.Usage
	if err := dec.Decode(&u); err != nil {
		return u, fmt.Errorf("%s is not a usage snapshot (the JSON of flagsnap's Provider.Usage): %v", name, err)
	}
	if dec.More() {
		return u, fmt.Errorf("%s is not a usage snapshot: data after the object", name)
	}
	if u.Since.IsZero() {
		return u, errors.New(name + ` has no "since": it is not a usage snapshot, or one of a provider built WithoutUsage, which counts nothing`)
	}
	return u, nil
}

// staleReport compares the keys of a flag file with a snapshot.
func staleReport(path string, keys []string, u flagsnap.Usage) usageReport {
	r := usageReport{File: path, Since: u.Since, Flags: len(keys), MissingDropped: u.MissingDropped, Stale: []staleEntry{}}
	defined := make(map[string]bool, len(keys))
	for _, k := range keys {
		defined[k] = true
		f, ok := u.Flags[k]
		switch {
		case ok && f.Evaluations == 0 && f.Bulk > 0:
			r.Stale = append(r.Stale, staleEntry{Kind: staleBulk, Key: k, Evaluations: f.Bulk, LastEvaluated: f.LastEvaluated})
		case !ok || f.Evaluations == 0:
			r.Stale = append(r.Stale, staleEntry{Kind: staleUnused, Key: k, NotInSnapshot: !ok})
		default:
			if variant, single := oneOutcome(f); single {
				r.Stale = append(r.Stale, staleEntry{Kind: staleSingle, Key: k, Evaluations: f.Evaluations, Variant: variant, LastEvaluated: f.LastEvaluated})
			}
		}
	}
	for k, n := range u.Missing {
		if !defined[k] {
			r.Stale = append(r.Stale, staleEntry{Kind: staleMissing, Key: k, Evaluations: n})
		}
	}
	for k := range u.Flags {
		if !defined[k] {
			r.Unknown = append(r.Unknown, k)
		}
	}
	slices.Sort(r.Unknown)
	slices.SortFunc(r.Stale, func(a, b staleEntry) int {
		return cmp.Or(cmp.Compare(staleOrder[a.Kind], staleOrder[b.Kind]), cmp.Compare(b.Evaluations, a.Evaluations), cmp.Compare(a.Key, b.Key))
	})
	return r
}

// oneOutcome reports whether every evaluation of a flag that was
// evaluated had the same outcome: the same variant, or the caller's
// default (disabled, no variant chosen, an error), which is "".
func oneOutcome(f flagsnap.FlagUsage) (string, bool) {
	served := uint64(0)
	var variant string
	for v, n := range f.Variants {
		if n == 0 {
			continue
		}
		if served > 0 {
			return "", false
		}
		variant, served = v, n
	}
	if defaults := f.Evaluations - served; served > 0 && defaults > 0 {
		return "", false
	}
	return variant, true
}

func printUsageReport(w, errw io.Writer, r usageReport) {
	width := 0
	for _, s := range r.Stale {
		width = max(width, len(s.Key))
	}
	missing, flags := 0, 0
	for _, s := range r.Stale {
		var what string
		switch s.Kind {
		case staleUnused:
			flags++
			if s.NotInSnapshot {
				what = "not in the snapshot: the service did not have it"
			}
		case staleBulk:
			flags++
			what = "read only by bulk evaluations, " + timesPhrase(s.Evaluations)
			if !s.LastEvaluated.IsZero() {
				what += ", the last at " + s.LastEvaluated.UTC().Format(time.RFC3339)
			}
		case staleMissing:
			missing++
			what = "asked " + timesPhrase(s.Evaluations)
		case staleSingle:
			flags++
			served := "the caller's default"
			if s.Variant != "" {
				served = strconv.Quote(s.Variant)
			}
			what = fmt.Sprintf("%s in all %d evaluations", served, s.Evaluations)
			if !s.LastEvaluated.IsZero() {
				what += ", the last at " + s.LastEvaluated.UTC().Format(time.RFC3339)
			}
		}
		line := fmt.Sprintf("%-16s %-*s  %s", s.Kind, width, s.Key, what)
		fmt.Fprintln(w, trimTrailingSpaces(line))
	}
	if r.MissingDropped > 0 {
		fmt.Fprintf(w, "missing          and %d more keys, which the snapshot did not keep\n", r.MissingDropped)
	}
	since := r.Since.UTC().Format(time.RFC3339)
	if len(r.Stale) == 0 {
		fmt.Fprintf(w, "%s: nothing stale: %d %s, every one evaluated with more than one outcome, no missing key, since %s\n",
			r.File, r.Flags, oneOrMany(r.Flags, "flag", "flags"), since)
	} else {
		fmt.Fprintf(w, "%s: %d of %d %s stale, %d missing %s, since %s\n",
			r.File, flags, r.Flags, oneOrMany(r.Flags, "flag", "flags"), missing, oneOrMany(missing, "key", "keys"), since)
	}
	if len(r.Unknown) > 0 {
		fmt.Fprintf(errw, "flagsnap usage: %d %s of the snapshot %s not in %s, and not checked: %s\n",
			len(r.Unknown), oneOrMany(len(r.Unknown), "flag", "flags"), oneOrMany(len(r.Unknown), "is", "are"), r.File, joinMax(r.Unknown, 5))
	}
}

func timesPhrase(n uint64) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// oneOrMany is one when n is 1, else many.
func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func trimTrailingSpaces(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// joinMax lists the first n of keys, and how many more.
func joinMax(keys []string, n int) string {
	var b bytes.Buffer
	for i, k := range keys[:min(n, len(keys))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
	}
	if len(keys) > n {
		fmt.Fprintf(&b, " and %d more", len(keys)-n)
	}
	return b.String()
}
