package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Body is a request's body: JSON with templates in its keys and strings,
// a form, or text.
type Body struct {
	JSON *JSONValue
	Text *Template
	Form []FormField
}

// ContentType is the body's Content-Type.
func (b *Body) ContentType() string {
	switch {
	case b.JSON != nil:
		return "application/json"
	case b.Form != nil:
		return "application/x-www-form-urlencoded"
	}
	return "text/plain; charset=utf-8"
}

// Render is the body's bytes for one request.
func (b *Body) Render(v *Vars) ([]byte, error) {
	if b.Form != nil {
		return b.renderForm(v)
	}
	if b.Text != nil {
		s, err := b.Text.Expand(v, nil)
		return []byte(s), err
	}
	var buf bytes.Buffer
	if err := b.JSON.render(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// JSONValue is a JSON value written in YAML, its keys in the file's order
// and its strings templates; JSONLiteral, JSONString, JSONObject and
// JSONList make one.
type JSONValue struct {
	lit   json.RawMessage // a number, true, false or null
	str   *Template
	keys  []*Template
	vals  []*JSONValue
	items []*JSONValue
	obj   bool
}

func (j *JSONValue) render(b *bytes.Buffer, v *Vars) error {
	switch {
	case j.lit != nil:
		b.Write(j.lit)
	case j.str != nil:
		s, err := j.str.Expand(v, nil)
		if err != nil {
			return err
		}
		q, _ := json.Marshal(s)
		b.Write(q)
	case j.obj:
		b.WriteByte('{')
		for i, k := range j.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			key, err := k.Expand(v, nil)
			if err != nil {
				return err
			}
			q, _ := json.Marshal(key)
			b.Write(q)
			b.WriteByte(':')
			if err := j.vals[i].render(b, v); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		b.WriteByte('[')
		for i, item := range j.items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := item.render(b, v); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	}
	return nil
}

// JSONLiteral is a number, true, false or null, as JSON.
func JSONLiteral(raw json.RawMessage) *JSONValue { return &JSONValue{lit: raw} }

// JSONString is a string, a template.
func JSONString(t *Template) *JSONValue { return &JSONValue{str: t} }

// JSONObject is an object, its keys in order.
func JSONObject(keys []*Template, vals []*JSONValue) *JSONValue {
	return &JSONValue{obj: true, keys: keys, vals: vals}
}

// JSONList is a list.
func JSONList(items []*JSONValue) *JSONValue {
	return &JSONValue{items: append([]*JSONValue{}, items...)}
}

// FormField is one field of a form: body, its value a template.
type FormField struct {
	Name  string
	Value *Template
}

// renderForm is the form's urlencoded body for one request.
func (b *Body) renderForm(v *Vars) ([]byte, error) {
	var out strings.Builder
	for i, f := range b.Form {
		s, err := f.Value.Expand(v, nil)
		if err != nil {
			return nil, fmt.Errorf("form field %s: %w", f.Name, err)
		}
		if i > 0 {
			out.WriteByte('&')
		}
		out.WriteString(url.QueryEscape(f.Name) + "=" + url.QueryEscape(s))
	}
	return []byte(out.String()), nil
}
