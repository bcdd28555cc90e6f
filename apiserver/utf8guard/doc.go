// Package utf8guard refuses a JSON request body that is not valid UTF-8
// before anything decodes it.
//
// JSON text is UTF-8 (RFC 8259), but Go's decoders, and with them the
// apiserver's, replace every invalid byte in a string by U+FFFD and go on:
// a VMI posted with such bytes in its kernel arguments, a user data or a
// key was stored as something other than what its client sent, and
// answered 201 as if it had been taken (found by the bad-input tests once
// they examined every 2xx: test/badinput). A client sends valid UTF-8 or
// has a bug the server must not hide. YAML needs no guard: its parser
// refuses invalid UTF-8 itself; protobuf carries bytes, and its strings
// are refused by its decoder.
package utf8guard
