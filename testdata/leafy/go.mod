module ctxprof.test/leafy

go 1.17
