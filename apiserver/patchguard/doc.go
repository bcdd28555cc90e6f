// Package patchguard turns two failures of the upstream patch code on a
// user's malformed patch into the client errors they are, instead of a
// server error:
//
//   - k8s.io/apimachinery's strategic merge patch and gopkg.in/evanphx's
//     JSON patch (v4) panic on some malformed patches (a $setElementOrder
//     list of objects, a replace at a path through a scalar) where they
//     should return an error: the apiserver's recovery answers 500, or
//     resets the HTTP/2 stream, and logs the panic with its stack. A panic
//     raised inside that code while a PATCH is served is answered 400.
//     Any other panic is left to the apiserver's recovery: it is a defect
//     of the server, not of the request.
//   - server-side apply answers a body that does not fit the schema (a
//     string where an object belongs, a field the schema does not
//     declare) with 500 "failed to create typed patch object": the
//     structured-merge-diff conversion returns a plain error, which the
//     handler reports as internal. That answer is rewritten to 422, with
//     the same message.
//
// It wraps the innermost handler, so it runs in the goroutine that serves
// the request (the finisher re-raises a panic of its worker there), and it
// must not import any client.
package patchguard
