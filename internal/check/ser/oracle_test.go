package ser

import (
	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/histtest"
)

// oracle decides a level by brute force (histtest.SerialOracle).
func oracle(h *history.History, level anomaly.Level, skew int64) bool {
	return histtest.SerialOracle(h, level, skew, false)
}

// oracleRecordedEnd is the oracle under the old reading of real time, which ordered a
// transaction of unknown outcome by its recorded end (TestTimeDifferential counts the
// histories it failed wrongly).
func oracleRecordedEnd(h *history.History, level anomaly.Level, skew int64) bool {
	return histtest.SerialOracle(h, level, skew, true)
}
