exports.format = (s) => s;
