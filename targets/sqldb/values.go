package sqldb

import (
	"encoding/base64"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Value is a column's value as a rule reads it: whole numbers as int64,
// other numbers as float64, NULL as nil, text as string, true and false
// as bool, a time as RFC 3339 text. typeName is the column's type as the
// driver names it: MySQL answers a query without arguments as text, and
// PostgreSQL a NUMERIC as text, so a number is read back from its type.
func Value(v any, typeName string) any {
	switch x := v.(type) {
	case nil, bool, int64, float64:
		return x
	case float32:
		return float64(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []byte:
		if n, ok := number(string(x), typeName); ok {
			return n
		}
		if utf8.Valid(x) {
			return string(x)
		}
		// Binary data: base64, so that it survives JSON unchanged.
		return base64.StdEncoding.EncodeToString(x)
	case string:
		if n, ok := number(x, typeName); ok {
			return n
		}
		return x
	}
	// Whole numbers of every other width, as each driver answers them.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return float64(rv.Uint())
	}
	return v
}

// number reads text as the number its column's type says it is.
func number(s, typeName string) (any, bool) {
	t := strings.ToUpper(typeName)
	switch {
	case strings.Contains(t, "INT") || t == "YEAR":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return float64(n), true
		}
	case t == "DECIMAL" || t == "NUMERIC" || t == "NEWDECIMAL":
		// A sum or a money amount: whole when it is.
		if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimRight(s, "0"), "."), 10, 64); err == nil && strings.Contains(s, ".") {
			return n, true
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
	case t == "FLOAT" || t == "DOUBLE" || t == "REAL" || t == "FLOAT4" || t == "FLOAT8":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
	case t == "BOOL" || t == "BOOLEAN":
		if b, err := strconv.ParseBool(s); err == nil {
			return b, true
		}
	}
	return nil, false
}
