package racefile

import (
	"crypto/sha256"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"gopkg.in/yaml.v3"
)

// form reads a form: body, a mapping from field names to text values,
// sent urlencoded in the file's order.
func (p *parser) form(n *yaml.Node, list string) (*expr.Body, error) {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return nil, p.at(n, "form: is %s; want a mapping of fields, such as {user: \"u{{n}}\", password: pw}", nodeKind(n))
	}
	b := &expr.Body{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, p.at(k, "a form field's name is %s; want text", nodeKind(k))
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, p.at(v, "form field %s is %s; want its value as text", k.Value, nodeKind(v))
		}
		if slices.ContainsFunc(b.Form, func(f expr.FormField) bool { return f.Name == k.Value }) {
			return nil, p.at(k, "form field %q given twice; give it once", k.Value)
		}
		t, err := p.template(v, v.Value, list, 0)
		if err != nil {
			return nil, err
		}
		b.Form = append(b.Form, expr.FormField{Name: k.Value, Value: t})
	}
	return b, nil
}

// KeySpec is what a trial's fresh key ({{key}}) is made of (key:): a
// prefix, then today's dashed run, target and trial numbers, or a run of
// letters and digits (alnum) or hex digits of a given length, for a
// service that takes a username or an id of its own shape.
type KeySpec struct {
	Prefix string
	// Chars is KeyDashed, KeyAlnum or KeyHex; Length counts the
	// characters after the prefix (alnum and hex only).
	Chars  string
	Length int
}

// The alphabets of key: {chars: …}.
const (
	KeyDashed = "dashed"
	KeyAlnum  = "alnum"
	KeyHex    = "hex"
	// maxKeyLength bounds key: {length: …}: two SHA-256 sums' worth.
	maxKeyLength = 64
)

var (
	keyChars  = []string{KeyAlnum, KeyHex, KeyDashed}
	alnumName = regexp.MustCompile(`^[A-Za-z0-9]{0,32}$`)
)

// keySpec reads key: as a mapping {prefix, chars, length}.
func (p *parser) keySpec(n *yaml.Node) error {
	fields, err := p.mapping(n, []string{"prefix", "chars", "length"}, "key:")
	if err != nil {
		return err
	}
	k := KeySpec{Prefix: DefaultKeyPrefix, Chars: KeyDashed}
	if v := fields["prefix"]; v != nil {
		k.Prefix = v.Value
	}
	if v := fields["chars"]; v != nil {
		if k.Chars = v.Value; !slices.Contains(keyChars, k.Chars) {
			return p.at(v, "key: chars: %q; want %s", v.Value, strings.Join(keyChars, ", "))
		}
	}
	if v := fields["length"]; v != nil {
		l, err := strconv.Atoi(v.Value)
		switch {
		case k.Chars == KeyDashed:
			return p.at(v, "key: length: a dashed key is as long as its numbers; want chars: alnum or hex with a length")
		case err != nil || l < 4 || l > maxKeyLength:
			return p.at(v, "key: length: %q; want a whole number from 4 to %d", v.Value, maxKeyLength)
		}
		k.Length = l
	} else if k.Chars != KeyDashed {
		k.Length = 12
	}
	prefix := fields["prefix"]
	switch {
	case k.Chars == KeyDashed && !raceName.MatchString(k.Prefix):
		return p.at(cmpNode(prefix, n), "key: prefix: %q; want a short prefix of letters, digits and dashes, such as account", k.Prefix)
	case k.Chars != KeyDashed && !alnumName.MatchString(k.Prefix):
		return p.at(cmpNode(prefix, n), "key: prefix: %q; want letters and digits only (chars: %s), such as u", k.Prefix, k.Chars)
	}
	p.f.Key = k
	if k.Prefix != "" {
		p.f.KeyPrefix = k.Prefix
	}
	return nil
}

// cmpNode is n, or or when n is missing: the node an error points at.
func cmpNode(n, or *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return or
}

// Of is the key the templates read for the engine's fresh key: the same
// when dashed; else the prefix and Length characters drawn from the
// engine's key by SHA-256, fresh as it is and the same every time it is
// asked.
func (k KeySpec) Of(key string) string {
	if k.Chars == "" || k.Chars == KeyDashed {
		return key
	}
	alphabet := "0123456789abcdef"
	if k.Chars == KeyAlnum {
		alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	}
	sum := sha256.Sum256([]byte(key))
	more := sha256.Sum256(sum[:])
	raw := append(sum[:], more[:]...)
	out := []byte(k.Prefix)
	for i := range k.Length {
		out = append(out, alphabet[int(raw[i])%len(alphabet)])
	}
	return string(out)
}
