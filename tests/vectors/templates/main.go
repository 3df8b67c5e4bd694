// Command templates renders every case of cases.json with Go's text/template (or html/template when a
// case says "html": true) and the sprig function map plus api-syncagent's sha3sum/sha3short/shortHash,
// and writes the outputs or errors as vectors.json. See README.md for how to run it.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"os"
	"crypto/sha1"
	"crypto/sha512"
	"text/template"

	"github.com/Masterminds/sprig"
	"golang.org/x/crypto/sha3"
)

type testCase struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	HTML     bool   `json:"html,omitempty"`
}

type vector struct {
	testCase
	Output *string `json:"output,omitempty"`
	Error  *string `json:"error,omitempty"`
}

func sha3sum(input string) string {
	hash := sha3.Sum256([]byte(input))
	return hex.EncodeToString(hash[:])
}

func sha3short(input string, lengths ...int) (string, error) {
	length := 20
	switch len(lengths) {
	case 0:
	case 1:
		length = lengths[0]
	default:
		return "", fmt.Errorf("sha3short: expected at most one length argument, got %d", len(lengths))
	}
	if length <= 0 {
		return "", fmt.Errorf("sha3short: invalid length %d", length)
	}
	hash := sha3sum(input)
	if length > len(hash) {
		length = len(hash)
	}
	return hash[:length], nil
}

func shortHash(input string) string {
	hash := sha1.Sum([]byte(input))
	return hex.EncodeToString(hash[:])[:20]
}

func funcs() map[string]any {
	f := sprig.TxtFuncMap()
	f["sha3sum"] = sha3sum
	f["sha3short"] = sha3short
	f["shortHash"] = shortHash
	// sprig 3.3.0 (api-syncagent's) adds sha512sum to the 3.2.3 Debian ships.
	f["sha512sum"] = func(input string) string {
		hash := sha512.Sum512([]byte(input))
		return hex.EncodeToString(hash[:])
	}
	return f
}

// numbers decodes JSON numbers as Kubernetes' unstructured decoder does: int64 when integral, else float64.
func numbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

func render(c testCase, data any) (string, error) {
	var buf bytes.Buffer
	if c.HTML {
		tpl, err := htmltemplate.New("inline").Funcs(funcs()).Parse(c.Template)
		if err != nil {
			return "", err
		}
		err = tpl.Execute(&buf, data)
		return buf.String(), err
	}
	tpl, err := template.New("inline").Funcs(funcs()).Parse(c.Template)
	if err != nil {
		return "", err
	}
	err = tpl.Execute(&buf, data)
	return buf.String(), err
}

func main() {
	raw, err := os.ReadFile("cases.json")
	if err != nil {
		panic(err)
	}
	var input struct {
		Data  json.RawMessage `json:"data"`
		Cases []testCase      `json:"cases"`
	}
	if err := json.Unmarshal(raw, &input); err != nil {
		panic(err)
	}
	out := []vector{}
	for _, c := range input.Cases {
		dec := json.NewDecoder(bytes.NewReader(input.Data))
		dec.UseNumber()
		var data any
		if err := dec.Decode(&data); err != nil {
			panic(err)
		}
		text, err := render(c, numbers(data))
		v := vector{testCase: c}
		if err != nil {
			msg := err.Error()
			v.Error = &msg
		} else {
			v.Output = &text
		}
		out = append(out, v)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
