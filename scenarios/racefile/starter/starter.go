package starter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/racelab/racelab/scenarios/racefile"
)

// Template is a commented race file to start from (racelab race init):
// the coupon race, every key said once.
const Template = `# A race file: one race on any HTTP API, fired by racelab and judged by
# the rule below on what the service holds afterwards.
#   racelab race lint coupon.race.yaml
#   racelab run coupon.race.yaml -t naive=http://127.0.0.1:8080 --expect naive=breaks
race: coupon-once
title: one coupon, redeemed once per account
requests: 10                 # the burst's N; -n overrides
key: account                 # {{key}} is a fresh account-… every trial
# env: [API_TOKEN]           # environment variables templates may read: {{env.API_TOKEN}}
setup:                       # before each trial's burst, in order, not raced; each must answer 2xx
  - request: PUT /accounts/{{key}}
    json: {owner: racelab}
burst:                       # the raced requests: N copies, or several kinds each with count:
  - request: POST /coupons/SAVE20/redeem
    json: {account: "{{key}}"}
    # headers: {Authorization: "Bearer {{env.API_TOKEN}}"}
    allowed: status == 200   # CEL over this answer: status, body (JSON), headers
    refused: status == 409   # anything neither allowed nor refused is an error: the trial proves nothing
readback:                    # after the burst, in order; each answer's JSON is named by as:
  - request: GET /accounts/{{key}}
    as: account
counted: account.discounts   # what the store counted, for the table's COUNTED column
# the hard rule, CEL over allowed, refused, errors, requests, answers and the as: names
rule: allowed <= 1 && account.discounts == allowed
# soft: account.discounts <= 2                       # a soft rule, judged beside it
# damage: string(account.discounts - 1) + " discounts too many"
`

// FromCurl turns a copied curl command (as a browser's "copy as cURL"
// writes it) into a starter race file: its method, path, headers and body
// as the burst, with a readback placeholder and a choice of rules left for
// its author to finish. target is the service's base URL, for -t. A
// credential (Authorization, Cookie) is not copied into the file: it
// becomes an {{env.NAME}} hole with its env: entry, and notes say which
// variables to set.
func FromCurl(command string) (file, target string, notes []string, err error) {
	if strings.HasSuffix(strings.TrimRight(command, " \t\n"), "\\") {
		return "", "", nil, fmt.Errorf("the command ends with a backslash, so its last line is missing; paste the whole command")
	}
	file, target, notes, err = fromCurl(command)
	return file, target, notes, err
}

func fromCurl(command string) (file, target string, notes []string, err error) {
	words, err := Split(command)
	if err != nil {
		return "", "", nil, err
	}
	if len(words) == 0 || words[0] != "curl" {
		return "", "", nil, fmt.Errorf("want a curl command, starting with curl")
	}
	method, raw := "", ""
	var headers [][2]string
	var body *string
	for i := 1; i < len(words); i++ {
		w := words[i]
		arg := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("curl %s: wants a value after it", w)
			}
			i++
			return words[i], nil
		}
		var v string
		switch {
		case w == "-X" || w == "--request":
			if method, err = arg(); err != nil {
				return "", "", nil, err
			}
		case w == "-H" || w == "--header":
			if v, err = arg(); err != nil {
				return "", "", nil, err
			}
			name, value, ok := strings.Cut(v, ":")
			if !ok {
				return "", "", nil, fmt.Errorf("curl -H %q: want Name: value", v)
			}
			headers = append(headers, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)})
		case slices.Contains([]string{"-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--json"}, w):
			if v, err = arg(); err != nil {
				return "", "", nil, err
			}
			if strings.HasPrefix(v, "@") && w != "--data-raw" {
				return "", "", nil, fmt.Errorf("curl %s %s: reads a file; paste the body itself", w, v)
			}
			if w == "--json" {
				headers = append(headers, [2]string{"Content-Type", "application/json"})
			}
			body = &v
		case w == "--url":
			if raw != "" {
				return "", "", nil, fmt.Errorf("two URLs, %s and --url; want one request: paste one curl command", raw)
			}
			if raw, err = arg(); err != nil {
				return "", "", nil, err
			}
		case slices.Contains([]string{"-s", "--silent", "-S", "--show-error", "-i", "--include", "-k", "--insecure", "-L", "--location",
			"--compressed", "-v", "--verbose", "-f", "--fail", "--http1.1", "--http2", "--http2-prior-knowledge"}, w):
			// How curl shows or fetches it; racelab has its own flags for these.
		case strings.HasPrefix(w, "-"):
			return "", "", nil, fmt.Errorf("curl option %s is not one racelab reads; want -X, -H, -d (--data, --data-raw, --json) and the URL", w)
		default:
			if raw != "" {
				return "", "", nil, fmt.Errorf("two URLs, %s and %s; want one request: paste one curl command", raw, w)
			}
			raw = w
		}
	}
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", nil, fmt.Errorf("curl command without an http:// or https:// URL")
	}
	if method == "" {
		method = "GET"
		if body != nil {
			method = "POST"
		}
	}
	method = strings.ToUpper(method)
	if !slices.Contains(racefile.Methods, method) {
		return "", "", nil, fmt.Errorf("curl -X %s: want one of %s", method, strings.Join(racefile.Methods, ", "))
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	var kept [][2]string
	var env []string
	for _, h := range headers {
		switch lower := strings.ToLower(h[0]); {
		case slices.Contains([]string{"content-length", "host", "accept-encoding", "connection"}, lower):
		case lower == "authorization" || lower == "cookie" || lower == "proxy-authorization":
			name := strings.ToUpper(strings.ReplaceAll(lower, "-", "_"))
			env = append(env, name)
			kept = append(kept, [2]string{h[0], "{{env." + name + "}}"})
			notes = append(notes, fmt.Sprintf("the %s header is not copied into the file: it is read from $%s (env: [%s]); set it before the run", http.CanonicalHeaderKey(h[0]), name, name))
		default:
			kept = append(kept, [2]string{h[0], escapeTemplate(h[1])})
		}
	}
	var b strings.Builder
	name := strings.Trim(nonName.ReplaceAllString(strings.ToLower(method+"-"+strings.Trim(u.Path, "/")), "-"), "-")
	fmt.Fprintf(&b, "# made by racelab race from-curl from %s %s%s\n", method, u.Host, path)
	fmt.Fprintf(&b, "#   %sracelab run THIS_FILE -t %s://%s\n", envWords(env), u.Scheme, u.Host)
	b.WriteString("# Put {{key}} where a fresh value each trial belongs (an account, an order),\n")
	b.WriteString("# write the readback and choose the rule, then: racelab race lint THIS_FILE\n")
	fmt.Fprintf(&b, "race: %s\n", clipName(name))
	fmt.Fprintf(&b, "title: %s %s, raced\n", method, u.Path)
	b.WriteString("requests: 10\n")
	if len(env) > 0 {
		fmt.Fprintf(&b, "env: [%s]   # credentials stay out of the file: set them in the environment\n", strings.Join(env, ", "))
	}
	b.WriteString("burst:\n")
	fmt.Fprintf(&b, "  - request: %s %s\n", method, escapeTemplate(path))
	if len(kept) > 0 {
		b.WriteString("    headers:\n")
		for _, h := range kept {
			fmt.Fprintf(&b, "      %s: %s\n", h[0], quote(h[1]))
		}
	}
	if body != nil {
		var compact bytes.Buffer
		if json.Valid([]byte(*body)) && json.Compact(&compact, []byte(*body)) == nil && !strings.Contains(compact.String(), "{{") {
			fmt.Fprintf(&b, "    json: %s\n", compact.String())
		} else {
			fmt.Fprintf(&b, "    body: %s\n", quote(escapeTemplate(*body)))
		}
	}
	b.WriteString("    allowed: status >= 200 && status <= 299\n    refused: status == 409 || status == 429\n")
	b.WriteString(starterTail(method, escapeTemplate(path)))
	return b.String(), u.Scheme + "://" + u.Host, notes, nil
}

// envWords is the variables a run needs set, for the starter's comment.
func envWords(env []string) string {
	var out string
	for _, name := range env {
		out += name + "=… "
	}
	return out
}

// starterTail is a starter's readback placeholder, counted: and rule: a
// GET of the same path to read the state back, and the usual rules to
// choose from. PUT and DELETE set a state rather than add to one: every
// copy may succeed, so they get no "allowed <= 1", which would call an
// idempotent endpoint broken.
func starterTail(method, path string) string {
	var b strings.Builder
	b.WriteString("readback:                    # read back what the burst changed: replace the path with the resource's\n")
	fmt.Fprintf(&b, "  - request: GET %s\n", path)
	b.WriteString("    as: state\n")
	b.WriteString("counted: allowed              # what the store counted, such as state.count, for the table\n")
	b.WriteString("# Choose the rule: what must hold, read back from the service.\n")
	b.WriteString("#   once only (a coupon, a signup):   allowed <= 1\n")
	b.WriteString("#   nothing lost (a counter):         state.count == allowed\n")
	b.WriteString("#   never past a stock of 3:          allowed <= 3 && state.sold == allowed\n")
	if method == "PUT" || method == "DELETE" {
		b.WriteString("#   a PUT or DELETE may succeed for every copy (it is idempotent): judge the state it leaves\n")
		b.WriteString("rule: allowed + refused == requests\n")
		return b.String()
	}
	b.WriteString("rule: allowed <= 1\n")
	return b.String()
}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

func clipName(s string) string {
	if s == "" {
		return "my-race"
	}
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	return s
}

// escapeTemplate keeps a copied value's own {{ from reading as a hole.
func escapeTemplate(s string) string { return strings.ReplaceAll(s, "{{", "{ {") }

// quote writes s as a YAML double-quoted scalar (JSON's quoting is one).
func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
