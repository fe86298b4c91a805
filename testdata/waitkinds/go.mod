module ctxprof.test/waitkinds

go 1.17
