package flagsnap_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

const shopFlags = `{"flags": {
  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
    "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on"]}},
  "banner-color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue"}
}}`

// A service serves its own front-end's flags over OFREP, from the flags
// its code evaluates.
func ExampleOFREPHandler() {
	provider, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(shopFlags)))
	if err != nil {
		log.Fatal(err)
	}
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()

	mux := http.NewServeMux()
	mux.Handle("/ofrep/", flagsnap.OFREPHandler(provider, flagsnap.WithOFREPAllowOrigins("https://shop.example.com")))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// What the web page's OFREP provider asks: one flag, for its user.
	resp, err := http.Post(srv.URL+"/ofrep/v1/evaluate/flags/new-checkout", "application/json",
		strings.NewReader(`{"context": {"targetingKey": "user-1", "email": "ann@example.com"}}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, " ", string(body))
	// Output: 200 OK {"key":"new-checkout","reason":"TARGETING_MATCH","variant":"on","value":true}
}

// Every flag for one user, for a page rendered on the server.
func ExampleProvider_EvaluateAll() {
	provider, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(shopFlags)))
	if err != nil {
		log.Fatal(err)
	}
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()

	all, err := provider.EvaluateAll(context.Background(), map[string]any{"targetingKey": "user-2", "email": "bob@else.org"})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range all.Flags {
		fmt.Println(f.Key, f.Value, f.Variant, f.Reason)
	}
	// Output:
	// banner-color blue blue STATIC
	// new-checkout false off DEFAULT
}
