class Money; end
