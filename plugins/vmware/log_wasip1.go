//go:build wasip1

package main

import "github.com/rpengine/rpengine/hostabi/guest"

func logLine(level int32, msg string) { guest.Log(level, msg) }
