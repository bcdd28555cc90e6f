package utf8guard

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

// WithGuard refuses with 400 Bad Request every POST, PUT and PATCH whose
// body is JSON (a JSON media type or a JSON patch type) and not valid
// UTF-8. Bodies over maxBodyBytes pass unread: the server refuses them
// itself (413). gv and s write the refusal as a Status.
func WithGuard(h http.Handler, maxBodyBytes int64, s runtime.NegotiatedSerializer, gv schema.GroupVersion) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Body == nil || !isJSON(req.Header.Get("Content-Type")) ||
			(req.Method != http.MethodPost && req.Method != http.MethodPut && req.Method != http.MethodPatch) {
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
		if err := Check(body); err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewBadRequest("request body: "+err.Error()), s, gv, w, req)
			return
		}
		h.ServeHTTP(w, req)
	})
}

// isJSON reports whether contentType is JSON: application/json and the
// patch types ending in +json. A request without a content type is
// decoded as JSON too.
func isJSON(contentType string) bool {
	if contentType == "" {
		return true
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mediaType = contentType
	}
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// Check returns an error naming the first invalid byte's offset when body
// is not valid UTF-8.
func Check(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	at := 0
	for at < len(body) {
		r, size := utf8.DecodeRune(body[at:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		at += size
	}
	return fmt.Errorf("not valid UTF-8 (the first invalid byte at offset %d); JSON text is UTF-8", at)
}

type readCloser struct {
	io.Reader
	io.Closer
}
