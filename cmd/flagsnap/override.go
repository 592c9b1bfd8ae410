package main

// --override: flag files layered over FILE's flags, as the library's
// WithOverrideFile layers them over a provider's source.

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/flagsnap/flagsnap/evaluator"
)

// overridePaths is --override, repeatable: the later over the earlier.
type overridePaths []string

func (o *overridePaths) String() string { return strings.Join(*o, ", ") }

func (o *overridePaths) Set(s string) error {
	if s == "" {
		return errors.New("want the path of a flag file")
	}
	*o = append(*o, s)
	return nil
}

// overrideUsage is --override's line in the options' lists.
const overrideUsage = "layer this flag file's flags over FILE's, by flag key; a later `PATH` wins (repeatable)"

// refHint is said of a refused override whose problem is a $ref: the
// evaluator it names may well be in FILE, where the override cannot see it.
const refHint = "a $ref resolves in the document that defines the flag: copy the evaluator into this override's $evaluators"

// compileOverride compiles an override strictly, as WithOverrideFile does:
// an override is there to force a known answer, so one broken flag refuses
// the whole document. The error, with the rule of $refs when a $ref is
// what it trips on, does not name the override: refused does.
func compileOverride(doc []byte, opts ...evaluator.Option) (*evaluator.FlagSet, error) {
	set, err := evaluator.Load(doc, append(slices.Clip(opts), evaluator.WithStrict())...)
	if errors.Is(err, evaluator.ErrUnresolvedRef) {
		err = fmt.Errorf("%w (%s)", err, refHint)
	}
	return set, err
}

// refused is the one-line error of the override at path, refused for err.
func refused(path string, err error) error {
	return fmt.Errorf("override %s refused: %w", path, err)
}

// readOverride reads the override at path: nil, and no error, when it
// does not exist.
func readOverride(path string) ([]byte, error) {
	doc, err := readInput(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("override %s: %s", path, readError(err))
	}
	return doc, nil
}

// layerOverrides is main's flags with the overrides at paths over them,
// each layer named by its path, for eval. eval reads each override once,
// so a missing one is an error rather than "no overrides": the answer
// would otherwise silently be FILE's.
func layerOverrides(mainPath string, main *evaluator.FlagSet, paths []string, opts ...evaluator.Option) (*evaluator.FlagSet, error) {
	layers := []evaluator.Layer{{Name: mainPath, Set: main}}
	for _, path := range paths {
		doc, err := readOverride(path)
		if err != nil {
			return nil, err
		}
		if doc == nil {
			return nil, fmt.Errorf("override %s: no such file (eval reads an override once and cannot wait for it; serve can)", path)
		}
		set, err := compileOverride(doc, opts...)
		if err != nil {
			return nil, refused(path, err)
		}
		layers = append(layers, evaluator.Layer{Name: path, Set: set})
	}
	return evaluator.Layered(layers...), nil // main itself, of one layer
}

// withOverrides is where a flag was looked for: FILE, and its overrides.
func withOverrides(path string, overrides []string) string {
	if len(overrides) == 0 {
		return path
	}
	return path + " or its overrides (" + strings.Join(overrides, ", ") + ")"
}
