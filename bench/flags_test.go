package bench

import (
	"strings"

	"github.com/flagsnap/flagsnap/bench/flaggen"
)

// evalFlags are the flags of the evaluation and operator rows.
const evalFlags = flaggen.Matrix

// changedEvalFlags is evalFlags with one flag's default variant changed.
var changedEvalFlags = strings.Replace(evalFlags, `"defaultVariant": "on", "variants": {"on": true, "off": false}},
  "simple"`, `"defaultVariant": "off", "variants": {"on": true, "off": false}},
  "simple"`, 1)

// generate is the standard mix of n flags; see flaggen.Generate.
func generate(n int, salt int) []byte { return flaggen.Generate(n, salt) }
