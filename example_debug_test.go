package flagsnap_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// A service mounts the debug page as it mounts net/http/pprof, on a mux
// that only its operators reach: the page shows every flag's rules and
// evaluates any flag for any context.
func ExampleDebugHandler() {
	provider, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(`{"flags": {
	  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}
	}}`)))
	if err != nil {
		log.Fatal(err)
	}
	// Mounted before Init, so that the page has the document of the first
	// flag set too.
	mux := http.NewServeMux()
	mux.Handle("/debug/flags/", http.StripPrefix("/debug/flags", flagsnap.DebugHandler(provider)))
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()

	// What an operator's browser or curl would ask.
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/debug/flags/evaluate?flag=new-checkout")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var result struct{ Variant, Reason string }
	if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, result.Variant, result.Reason)
	// Output: 200 OK off STATIC
}
