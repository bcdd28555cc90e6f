package exponentguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"sigs.k8s.io/yaml"
)

// MaxExponent and MaxDigits bound a number in a request body: a quantity at
// the bounds still parses and compares in a millisecond.
const (
	MaxExponent = 1000
	MaxDigits   = 1000
)

// maxProtobufDepth bounds the nesting the protobuf walk follows; the
// objects of this API nest far less.
const maxProtobufDepth = 64

// protobufMagic prefixes every protobuf body of the Kubernetes API.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// Error names the value refused and, for JSON and YAML, where it is.
type Error struct {
	// Path is the value's field path (spec.domain.memory.guest), empty
	// when the encoding does not say (protobuf).
	Path  string
	Value string
}

func (e *Error) Error() string {
	where := "a field"
	if e.Path != "" {
		where = e.Path
	}
	return fmt.Sprintf("%s: %q: a number may have at most %d digits and an exponent within ±%d (such a value would take the server unbounded time to decode)", where, e.Value, MaxDigits, MaxExponent)
}

// WithGuard refuses with 400 Bad Request every POST, PUT and PATCH whose
// body holds an absurd number. Bodies over maxBodyBytes pass unread: the
// server refuses them itself (413). gv and s write the refusal as a Status.
func WithGuard(h http.Handler, maxBodyBytes int64, s runtime.NegotiatedSerializer, gv schema.GroupVersion) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Body == nil || (req.Method != http.MethodPost && req.Method != http.MethodPut && req.Method != http.MethodPatch) {
			h.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, maxBodyBytes+1))
		if err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err)), s, gv, w, req)
			return
		}
		if int64(len(body)) > maxBodyBytes {
			req.Body = readCloser{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
			h.ServeHTTP(w, req)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if err := Check(req.Header.Get("Content-Type"), body); err != nil {
			var refused *Error
			if errors.As(err, &refused) {
				responsewriters.ErrorNegotiated(apierrors.NewBadRequest("request body: "+err.Error()), s, gv, w, req)
				return
			}
			// Anything else is malformed input the decoder will refuse
			// with its own, better, message.
		}
		h.ServeHTTP(w, req)
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// Check returns an *Error when body, of the given content type, holds a
// number or a numeric string beyond MaxDigits or ±MaxExponent. Content
// types it does not know, and bodies it cannot parse, are left to the
// decoder (another error, or nil).
func Check(contentType string, body []byte) error {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mediaType = contentType
	}
	switch {
	case mediaType == "application/vnd.kubernetes.protobuf":
		if !bytes.HasPrefix(body, protobufMagic) {
			return nil
		}
		return checkProtobuf(body[len(protobufMagic):], 0)
	case strings.HasSuffix(mediaType, "yaml"):
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return err
		}
		return checkJSON(j)
	case strings.HasSuffix(mediaType, "json"):
		return checkJSON(body)
	}
	return nil
}

// checkJSON walks the tokens of one JSON document, keeping the path.
func checkJSON(body []byte) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	return walkJSON(d, nil)
}

func walkJSON(d *json.Decoder, path []string) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			for d.More() {
				key, err := d.Token()
				if err != nil {
					return err
				}
				if err := walkJSON(d, append(path, fmt.Sprint(key))); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; d.More(); i++ {
				if err := walkJSON(d, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
					return err
				}
			}
		}
		_, err := d.Token() // the closing delimiter
		return err
	case json.Number:
		return refuse(string(v), path)
	case string:
		return refuse(v, path)
	}
	return nil
}

func refuse(v string, path []string) error {
	if !absurdNumber(v) {
		return nil
	}
	var p strings.Builder
	for _, e := range path {
		if p.Len() > 0 && !strings.HasPrefix(e, "[") {
			p.WriteByte('.')
		}
		p.WriteString(e)
	}
	return &Error{Path: p.String(), Value: truncate(v)}
}

// checkProtobuf walks every length-delimited field: a numeric string is
// checked, anything that parses as a message is walked in turn (the wire
// format does not say which is which, and a quantity is a message holding
// one string).
func checkProtobuf(b []byte, depth int) error {
	if depth > maxProtobufDepth {
		return nil
	}
	for len(b) > 0 {
		_, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			if absurdNumber(string(v)) {
				return &Error{Value: truncate(string(v))}
			}
			// Not a message: a string or bytes, already checked.
			var refused *Error
			if err := checkProtobuf(v, depth+1); errors.As(err, &refused) {
				return err
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(0, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// absurdNumber says whether s is a decimal number resource.ParseQuantity
// would spend unbounded time on: [+-]digits[.digits][(e|E)[+-]digits] with
// more than MaxDigits digits (a million take it seconds) or an exponent
// beyond ±MaxExponent.
func absurdNumber(s string) bool {
	mantissa, exponent, hasExponent := strings.Cut(strings.Replace(s, "E", "e", 1), "e")
	mantissa = strings.TrimPrefix(strings.TrimPrefix(mantissa, "+"), "-")
	digits, dots := 0, 0
	for _, c := range mantissa {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	if digits == 0 || dots > 1 {
		return false
	}
	if !hasExponent {
		return digits > MaxDigits
	}
	if exponent != "" && (exponent[0] == '+' || exponent[0] == '-') {
		exponent = exponent[1:]
	}
	if exponent == "" || strings.Trim(exponent, "0123456789") != "" {
		return false
	}
	if digits > MaxDigits {
		return true
	}
	exponent = strings.TrimLeft(exponent, "0")
	if len(exponent) > len(strconv.Itoa(MaxExponent)) {
		return true
	}
	e, _ := strconv.Atoi(exponent)
	return e > MaxExponent
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
