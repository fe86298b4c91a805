module ctxprof.test/parked

go 1.17
