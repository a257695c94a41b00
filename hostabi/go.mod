module github.com/rpengine/rpengine/hostabi

go 1.26.0
