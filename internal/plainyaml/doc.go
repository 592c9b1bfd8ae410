// Package plainyaml turns a decoded YAML flag document into the plain
// values a decoded JSON one has, for the places that read a document
// beside the evaluator (a sync server's sources, the debug page's flag
// definitions, the command's schema check). The evaluator shares two of
// its rules with them: which of the two a document is (IsJSON), and the
// text of a mapping key that is not a string (KeyText).
package plainyaml
