module ctxprof.test/memrate

go 1.17
