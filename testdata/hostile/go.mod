module ctxprof.test/hostile

go 1.17
