// Package evaluator loads flagd flag sets and resolves flags against an
// evaluation context, in process.
//
// [Load] parses a flag document (JSON or YAML: "flags" as an object or an
// array, "$evaluators" referenced with {"$ref": name}, flag-set and flag
// metadata) and compiles every targeting rule once. The resulting
// [FlagSet] is immutable and safe for concurrent use; a new document
// produces a new FlagSet.
//
// Resolving a flag ([FlagSet.ResolveBool] and its siblings) looks the flag up,
// runs its compiled rule against the caller's context map in place (no
// copy, no JSON encoding, no locks) and maps the result to a variant the
// way flagd does: a variant name, true/false for the variants "true" and
// "false", a number for the variant of that spelling, null for the default
// variant.
//
// # Targeting language
//
// Rules are JsonLogic with the behaviour of github.com/diegoholiveira/jsonlogic/v3,
// flagd's own engine, operator by operator (its coercions in ==, <, in and
// cat, its truthiness, its var paths), plus flagd's operators starts_with,
// ends_with, sem_ver and fractional (in the three bucketing versions of
// package fractional, and under its legacy name fractionalEvaluation).
// The data a rule sees is, in order of precedence, $flagd (flagKey and
// timestamp), the flag set's enrichment ([FlagSet.WithEnrichment]) and the
// caller's context.
//
// Numbers from the context are float64 to the operators, as JSON makes
// them for flagd's engine, and any other Go value is read through its JSON
// form. Fractional v3 alone sees more: a value a var takes from the context
// is hashed as the caller's Go value, exactly (64-bit integers, float32, a
// time as a time; see fractional.AppendCBOR), at any depth, while values a
// rule computes are hashed as the targeting language has them.
//
// # Problems
//
// A document that is not a flag set is rejected whole ([SyntaxError] with
// line and column, [DocumentError]). A problem confined to one flag (an
// unknown $ref, a rule that cannot compile, invalid constant fractional
// weights, a default variant that is not a variant, variants of mixed types)
// only breaks that flag: it answers [CodeParseError] and the other flags load.
// [WithStrict] rejects the whole document instead, as flagd does. Each
// problem says where in the document it is written, as data
// ([FlagProblem.Path], [DocumentError.Path]) for tools to point at.
//
// Errors are typed: a [Resolution] carries an [*Error] whose [ErrorCode]
// maps one to one to OpenFeature's error codes.
//
// # Explanations
//
// [FlagSet.Explain] resolves a flag like the Resolve methods and records
// the path its rule took: every operation with its inputs and its result,
// and for fractional the bucketing value, the bytes hashed, the hash, the
// bucket and the weights. The record is made by the evaluation itself
// (which checks for a recorder with one nil test), so a debug endpoint that
// shows it shows what the provider does, and the Resolve methods pay
// nothing for it.
package evaluator
