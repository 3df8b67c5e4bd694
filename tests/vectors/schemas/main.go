// Command schemas prints, for every CRD spec in cases.json, what api-syncagent hashes for the
// APIResourceSchema name: json.NewEncoder(sha1).Encode(crd.Spec) with Spec.Conversion = nil, using
// the apiextensions/v1 types that extract-types.sh copies from a k8s.io/apiextensions-apiserver
// checkout into types.go (not committed). See README.md.
package main

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
)

type vector struct {
	Name     string          `json:"name"`
	Spec     json.RawMessage `json:"spec"`
	JSON     string          `json:"json"`
	SchemaID string          `json:"schemaName"`
}

func main() {
	raw, err := os.ReadFile("cases.json")
	if err != nil {
		panic(err)
	}
	var cases []struct {
		Name string          `json:"name"`
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	out := []vector{}
	for _, c := range cases {
		var spec CustomResourceDefinitionSpec
		if err := json.Unmarshal(c.Spec, &spec); err != nil {
			panic(err)
		}
		spec.Conversion = nil
		var buf strings.Builder
		if err := json.NewEncoder(&buf).Encode(spec); err != nil {
			panic(err)
		}
		hash := sha1.Sum([]byte(buf.String()))
		group := spec.Group
		if group == "" {
			group = "core"
		}
		name := "v" + hex.EncodeToString(hash[:])[:8] + "." + spec.Names.Plural + "." + group
		out = append(out, vector{Name: c.Name, Spec: c.Spec, JSON: buf.String(), SchemaID: name})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
