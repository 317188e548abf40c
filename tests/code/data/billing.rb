require "json"
require_relative "money"

# Billing for customers.
module Billing
  # An invoice with lines.
  class Invoice
    def initialize(lines)
      @lines = lines
    end

    # The sum of the lines.
    def total
      @lines.sum(&:amount)
    end

    def self.empty
      new([])
    end
  end

  def self.currency
    "EUR"
  end
end

def helper
  :ok
end
