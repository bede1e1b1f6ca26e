Bench.run(arguments: Array(CommandLine.arguments.dropFirst()))
