// Package logformat writes the engine's log records where and how a
// deployment collects them: oslo.log's text format, which kolla-ansible's
// fluentd splits records by (its first-line pattern), and a log file that
// logrotate can rotate (reopened on SIGHUP).
//
// It must never drop a record's attributes or let a value's line breaks
// start what a collector would read as a new record.
package logformat
