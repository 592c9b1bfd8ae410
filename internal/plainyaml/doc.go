// Package plainyaml holds what every reader of a flag document here
// shares about YAML: the byte order mark each skips (TrimBOM), which of
// JSON and YAML a document is (IsJSON), the text of a mapping key that is
// not a string (KeyText), and, for the readers beside the evaluator (the
// debug page's flag definitions, the command's schema check), the plain
// values a decoded JSON document has (Plain).
package plainyaml
