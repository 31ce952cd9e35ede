// Package expr is the two small languages inside a race file: templates
// with {{NAME}} holes, parsed once when the file is loaded and expanded
// for every request from Vars (and the JSON and form bodies made of
// them), and CEL expressions (rule:, allowed:, capture:, counted:, a sql:
// statement's args:), compiled and type-checked once and evaluated for
// every answer and every trial.
//
// It knows nothing of YAML or of the file's keys: package racefile places
// what goes wrong here at its file, line and column, and decides which
// names a template or an expression may read where.
package expr
