module ctxprof.test/clocky

go 1.17
