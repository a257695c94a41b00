package engine

// JudgeAtIntend turns the settled providers' short way through the syncs
// on or off (sync.go, isSettled), for a test to compare both ways.
func JudgeAtIntend(on bool) { judgeAtIntend = on }
